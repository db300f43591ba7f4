package harness

import (
	"bytes"
	"os"
	"testing"

	"github.com/mfm-project/mfm/episodes"
)

// TestLatestStateFile: without now/, the latest state is the last
// episode's end state, and LatestState.StateFile gives the bytes the
// recorder then writes as the next episode's state/state.json.
func TestLatestStateFile(t *testing.T) {
	s := newStore(t)
	r, err := NewRecorder(s, Options{NoNow: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	start := st(0, 1.5, 64, -2.25)
	start.Extra = map[string]any{"mainhand": "air", "vitals": map[string]any{"food": 20.0}}
	if _, err := r.Initial(start, nil); err != nil {
		t.Fatal(err)
	}
	r.Begin(Call{Kind: "go_to"})
	end := start
	end.Step, end.X, end.Yaw, end.Inventory = 3, 4.0, 90, map[string]int{"log": 2}
	if err := r.Step(Step{State: end}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.End(); err != nil {
		t.Fatal(err)
	}
	latest, err := episodes.FindLatestState(s)
	if err != nil {
		t.Fatal(err)
	}
	if latest.Source != "episodes/ep_000001/outcome.json end_state" {
		t.Fatalf("latest state from %s", latest.Source)
	}
	got, err := latest.StateFile()
	if err != nil {
		t.Fatal(err)
	}
	r.Begin(Call{Kind: "wait"})
	row, err := r.End()
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(s.Path(row.Path, "state", "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("StateFile:\n%s\nthe next episode's state.json:\n%s", got, want)
	}
}
