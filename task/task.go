// Package task reads task files for `mfmd play` and evaluates their
// milestones on the logged state: a task is an instruction, milestones as
// predicates over harness.State (inventory counts, crafted items, depth,
// a position within r, alive), a step budget, a world seed and a start
// kit. It knows no game; see docs/PLAY.md.
package task

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/mfm-project/mfm/internal/strictjson"
)

// DefaultPlanCap is the most steps one plan (one `mfmd act` call) may
// plan for when the task does not say: the paper's plan cap.
const DefaultPlanCap = 400

// Task is one task file.
type Task struct {
	// Name identifies the task (the file stem when empty).
	Name string `json:"name"`
	// Instruction is what the agent is told to do.
	Instruction string `json:"instruction"`
	// Game is the game the task is for (minetest_game).
	Game string `json:"game,omitempty"`
	// Seed is the world's map seed (0: the game adapter's default).
	Seed int64 `json:"seed,omitempty"`
	// Budget is the number of environment steps the run may use.
	Budget int `json:"budget"`
	// PlanCap is the most steps one plan may plan for (default 400).
	PlanCap int `json:"plan_cap,omitempty"`
	// StartKit is what the player holds at the start (item: count).
	StartKit map[string]int `json:"start_kit,omitempty"`
	// Ordered: a milestone counts only once the one before it is reached,
	// and the agent is told only the reached ones and the next (the
	// paper's undisclosed goals).
	Ordered bool `json:"ordered,omitempty"`
	// Milestones are what the run is scored on; the task is done when all
	// are reached.
	Milestones []Milestone `json:"milestones"`
	// Tags group tasks in the catalog (chain, probe, memory).
	Tags []string `json:"tags,omitempty"`
}

// Milestone is one named condition on the logged state.
type Milestone struct {
	Name string `json:"name"`
	// When is the predicate (see ParsePredicate).
	When string `json:"when"`
	// Hint is said to the agent with the milestone (optional).
	Hint string `json:"hint,omitempty"`

	pred Predicate
}

// Predicate is the parsed When (valid after Parse or Load).
func (m Milestone) Predicate() Predicate { return m.pred }

var nameRe = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// Parse reads a task file's JSON. Unknown fields are errors (a typo would
// otherwise silently drop a milestone's meaning).
func Parse(data []byte) (*Task, error) {
	var t Task
	if err := strictjson.Decode(data, &t); errors.Is(err, strictjson.ErrTrailing) {
		return nil, fmt.Errorf("task: %w", err)
	} else if err != nil {
		return nil, fmt.Errorf("task: not a task object: %w", err)
	}
	if err := t.validate(); err != nil {
		return nil, err
	}
	return &t, nil
}

func (t *Task) validate() error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("task %s: "+format, append([]any{t.Name}, a...)...))
	}
	if t.Name != "" && !nameRe.MatchString(t.Name) {
		bad("name %q: want lower case letters, digits, _ and - (a file stem)", t.Name)
	}
	if strings.TrimSpace(t.Instruction) == "" {
		bad(`"instruction" is empty: say what the agent is to do`)
	}
	if t.Budget <= 0 {
		bad(`"budget" %d: want a positive number of steps`, t.Budget)
	}
	if t.PlanCap < 0 {
		bad(`"plan_cap" %d: want a positive number of steps (or leave it out: %d)`, t.PlanCap, DefaultPlanCap)
	}
	if t.Seed < 0 {
		bad(`"seed" %d: want 0 (the game's default) or a positive map seed`, t.Seed)
	}
	for item, n := range t.StartKit {
		if !itemRe.MatchString(item) {
			bad("start_kit: %q is not an item name", item)
		}
		if n <= 0 {
			bad("start_kit: %s: count %d, want at least 1", item, n)
		}
	}
	if len(t.Milestones) == 0 {
		bad(`no "milestones": a task needs at least one to be scored`)
	}
	seen := map[string]bool{}
	for i := range t.Milestones {
		m := &t.Milestones[i]
		if !nameRe.MatchString(m.Name) {
			bad("milestones[%d]: name %q: want lower case letters, digits, _ and -", i, m.Name)
		} else if seen[m.Name] {
			bad("milestones[%d]: %q named twice", i, m.Name)
		}
		seen[m.Name] = true
		p, err := ParsePredicate(m.When)
		if err != nil {
			bad("milestones[%d] %s: %v", i, m.Name, err)
			continue
		}
		m.pred = p
	}
	return errors.Join(errs...)
}

// Cap is the plan cap in steps.
func (t *Task) Cap() int {
	if t.PlanCap > 0 {
		return t.PlanCap
	}
	return DefaultPlanCap
}

// Load reads a task file; a name without a slash or .json suffix is looked
// up in dirs (the catalog) as NAME.json.
func Load(name string, dirs ...string) (*Task, string, error) {
	paths := []string{name}
	if !strings.ContainsRune(name, '/') && !strings.HasSuffix(name, ".json") {
		paths = nil
		for _, d := range dirs {
			paths = append(paths, filepath.Join(d, name+".json"))
		}
	}
	var tried []string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			tried = append(tried, p)
			continue
		}
		if err != nil {
			return nil, "", fmt.Errorf("task %s: %w", name, err)
		}
		t, err := Parse(b)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", p, err)
		}
		if t.Name == "" {
			t.Name = strings.TrimSuffix(filepath.Base(p), ".json")
		}
		return t, p, nil
	}
	if len(tried) == 0 {
		return nil, "", fmt.Errorf("task %q: no catalog directory to look in (give a path to a task file)", name)
	}
	return nil, "", fmt.Errorf("task %q: no such file (looked at %s)", name, strings.Join(tried, ", "))
}
