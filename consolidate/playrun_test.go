package consolidate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mfm-project/mfm/episodes"
)

// run.json's milestones go to the episode of the reaching turn whose
// steps hold the step (first_step is the start state's: a milestone of
// that step was reached before); an episode's subgoal is the first
// milestone not reached when it began; episodes run.json does not list
// (another life's) get nothing.
func TestRunMilestones(t *testing.T) {
	s, err := episodes.Init(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	run := `{"milestones": [{"name": "planks", "index": 1, "reached": true, "step": 49, "turn": "t0011"},
		{"name": "log", "index": 0, "reached": true, "step": 47, "turn": "t0010"}, {"name": "sticks", "index": 2}],
		"turns": [{"id": "t0010", "entries": [{"episodes": ["ep_000016"]}, {"episodes": ["ep_000017"]}]}, {"id": "t0011", "entries": [{"episodes": ["ep_000018"]}]}]}`
	if err := os.WriteFile(s.Path("run.json"), []byte(run), 0o644); err != nil {
		t.Fatal(err)
	}
	rm := readRunMilestones(s)
	cases := []struct {
		id          string
		first, last int64
		want        string // milestones, then the subgoal
	}{
		{"ep_000016", 38, 42, "|log"},
		{"ep_000017", 42, 47, "log|log"},
		{"ep_000018", 47, 49, "planks|planks"},
		{"ep_000019", 49, 51, "|"}, // not in run.json's turns
	}
	for _, c := range cases {
		f := Feedback{Episode: c.id, FirstStep: c.first, LastStep: c.last, Milestones: []string{}}
		rm.apply(&f)
		if got := strings.Join(f.Milestones, ",") + "|" + f.Subgoal; got != c.want {
			t.Errorf("%s (%d-%d): %q, want %q", c.id, c.first, c.last, got, c.want)
		}
	}
	if readRunMilestones(&episodes.Store{Root: t.TempDir()}) != nil {
		t.Error("no run.json: want nil")
	}
}
