package play

import (
	_ "embed"
	"fmt"
	"sort"
	"strings"
	"text/template"

	"github.com/mfm-project/mfm/harness"
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
	// MineFrozen says mine/ is mounted read-only for the run: the brief
	// says the memory is frozen instead of asking for notes.
	MineFrozen bool
	// SharedAs is the agent's name when the mount shares memory with
	// other agents (agents/NAME/): the brief says so. "" when not shared.
	SharedAs string
	// Ablation is what the mount hides for the run (docs/EVAL.md): the
	// brief leaves out what is not there.
	Ablation BriefAblation
}

// BriefAblation is what an evaluation ablation hides from the agent.
type BriefAblation struct {
	// Flat: no index.jsonl, grid.jsonl, q/ or map/ (the turn block has
	// no [MAP] lines): the brief describes logs.txt and episodes/.
	Flat bool
	// NoObservations: no frames, observations or views (no [FRAME]).
	NoObservations bool
	// NoProcedures: no mine/procedures/.
	NoProcedures bool
}

// briefConventions are the Conventions without what the ablation hides
// (flat: the grid's cells, the map/ views, the map).
func briefConventions(a BriefAblation) []string {
	if !a.Flat {
		return Conventions
	}
	out := make([]string, len(Conventions))
	for i, c := range Conventions {
		if j := strings.Index(c, " grid.jsonl cells and map/ views"); j >= 0 {
			c = c[:j]
		}
		out[i] = strings.Replace(c, ", the map and your notes", " and your notes", 1)
	}
	return out
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
		FirstGoal, SharedAs                                         string
		Budget, PlanCap, Undisclosed                                int
		Ordered, MineFrozen, Flat, NoObservations, NoProcedures     bool
		Goals                                                       []goal
		Atoms                                                       []atom
		Conventions                                                 []string
	}{Conventions: briefConventions(b.Ablation), Name: t.Name, Instruction: t.Instruction, Game: game, Mount: b.Mount, Store: b.Store, Socket: b.Socket,
		RawKeys: strings.Join(b.RawKeys, ", "), Budget: budget, PlanCap: t.Cap(), Ordered: t.Ordered, MineFrozen: b.MineFrozen,
		Flat: b.Ablation.Flat, NoObservations: b.Ablation.NoObservations, NoProcedures: b.Ablation.NoProcedures, SharedAs: b.SharedAs}
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
	if len(t.Milestones) > 0 {
		d.FirstGoal = t.Milestones[0].Name
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

// BriefFiles are the names the brief is written under in an agent's work
// directory: BRIEF.md, and AGENTS.md, which coding agent CLIs read by
// themselves.
var BriefFiles = []string{"BRIEF.md", "AGENTS.md"}

// BriefFile is the brief as written to the work directory's file name:
// a first line says the other of BriefFiles holds the same text, so an
// agent reads one of them.
func BriefFile(name, brief string) string {
	var others []string
	for _, f := range BriefFiles {
		if f != name {
			others = append(others, f)
		}
	}
	if len(others) == len(BriefFiles) {
		return brief
	}
	return fmt.Sprintf("> %s and %s in this directory hold the same brief (agent CLIs read AGENTS.md by themselves): read one of them.\n\n%s",
		name, strings.Join(others, " and "), brief)
}

// procSignature is a procedure as mfmd act --list shows it: its declared
// parameters with their defaults, "dig_cobble(n=4, craft=True)".
func procSignature(p *harness.Procedure) string {
	ps := make([]string, 0, len(p.Params))
	for _, prm := range p.Params {
		if prm.Default != "" {
			ps = append(ps, prm.Name+"="+prm.Default)
		} else {
			ps = append(ps, prm.Name)
		}
	}
	return p.Name + "(" + strings.Join(ps, ", ") + ")"
}

// procParamDocs is a line per described parameter, under the procedure's
// description.
func procParamDocs(p *harness.Procedure) string {
	var b strings.Builder
	for _, prm := range p.Params {
		if prm.Description != "" {
			fmt.Fprintf(&b, "        %s: %s\n", prm.Name, prm.Description)
		}
	}
	return b.String()
}
