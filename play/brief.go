package play

import (
	_ "embed"
	"fmt"
	"sort"
	"strings"
	"text/template"

	"github.com/mfm-project/mfm/task"
)

//go:embed brief.md.tmpl
var briefText string

var briefTmpl = template.Must(template.New("brief").Parse(briefText))

// BriefInfo is what the brief is generated from.
type BriefInfo struct {
	Task    *task.Task
	Atoms   []AtomSpec
	RawKeys []string
	Mount   string // where the agent reads its memory
	Store   string
	Socket  string
	Budget  int // 0: the task's
}

// Brief renders the standing brief for an agent playing t: the task,
// how to act with mfmd act, the atoms, how to use and write the memory.
func Brief(b BriefInfo) (string, error) {
	type goal struct{ Name, When, Hint string }
	type atom struct{ Signature, Doc string }
	t := b.Task
	game := t.Game
	if game == "" {
		game = "the game"
	}
	budget := t.Budget
	if b.Budget > 0 {
		budget = b.Budget
	}
	d := struct {
		Name, Instruction, Game, Mount, Store, Socket, RawKeys, Kit string
		Budget, PlanCap, Undisclosed                                int
		Ordered                                                     bool
		Goals                                                       []goal
		Atoms                                                       []atom
		Conventions                                                 []string
	}{Conventions: Conventions, Name: t.Name, Instruction: t.Instruction, Game: game, Mount: b.Mount, Store: b.Store, Socket: b.Socket,
		RawKeys: strings.Join(b.RawKeys, ", "), Budget: budget, PlanCap: t.Cap(), Ordered: t.Ordered}
	d.Kit = "nothing"
	if len(t.StartKit) > 0 {
		var kit []string
		for item, n := range t.StartKit {
			kit = append(kit, fmt.Sprintf("%d %s", n, item))
		}
		sort.Strings(kit)
		d.Kit = strings.Join(kit, ", ")
	}
	for i, m := range t.Milestones {
		if t.Ordered && i > 0 {
			d.Undisclosed++
			continue
		}
		d.Goals = append(d.Goals, goal{m.Name, m.When, m.Hint})
	}
	for _, a := range b.Atoms {
		d.Atoms = append(d.Atoms, atom{a.signature(), a.Doc})
	}
	var w strings.Builder
	if err := briefTmpl.Execute(&w, d); err != nil {
		return "", fmt.Errorf("play: brief: %w", err)
	}
	return w.String(), nil
}
