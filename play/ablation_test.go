package play

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/harness"
)

// TestNoProcedures: with Options.NoProcedures a plan naming the agent's
// procedure is refused before anything runs, and the procedure is not
// listed; without it the same plan runs.
func TestNoProcedures(t *testing.T) {
	for _, off := range []bool{false, true} {
		f := newFixture(t, logTask, Options{NoProcedures: off})
		procs := f.store.Path(episodes.MineDir, "procedures")
		if err := os.MkdirAll(procs, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(procs, "get_log.py"), []byte(`"""get_log: walk to the tree at (x, z) and mine it."""
import json, sys
PARAMS = {"x": "tree x", "z": "tree z"}
a = json.loads(sys.argv[sys.argv.index("--args") + 1])
print(json.dumps({"actions": [{"procedure": "go_to", "args": {"x": a["x"], "z": a["z"]}}, {"procedure": "mine_ahead"}]}))
`), 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err := f.sess.Act(context.Background(), "get_log x=5 z=0", "test")
		var pe *PlanError
		if refused := errors.As(err, &pe); refused != off {
			t.Errorf("NoProcedures %v: plan refused %v (%v), want %v", off, refused, err, off)
		}
		if listed := strings.Contains(f.sess.ListAtoms(), "get_log"); listed == off {
			t.Errorf("NoProcedures %v: get_log listed %v", off, listed)
		}
	}
}

// TestSimWorldOnAStoreWithEpisodes: a second sim world recording into the
// same store starts afresh but goes on counting steps, so that a second
// play into one store records (a source sequence of several tasks).
func TestSimWorldOnAStoreWithEpisodes(t *testing.T) {
	f := newFixture(t, logTask, Options{})
	f.act(t, "go_to x=3 z=0")
	before := f.world.State()
	if err := f.rec.Close(); err != nil {
		t.Fatal(err)
	}
	rec, err := harness.NewRecorder(f.store, harness.Options{Frames: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	w, err := NewSimWorld(rec)
	if err != nil {
		t.Fatal(err)
	}
	if st := w.State(); st.Step != before.Step || st.X != 0 || st.Z != 0 {
		t.Fatalf("second world starts at step %d pos (%v, %v); want step %d at the origin", st.Step, st.X, st.Z, before.Step)
	}
	if _, err := w.Call(context.Background(), "go_to", Args{"x": 2.0, "z": 0.0, "within": 1.0}); err != nil {
		t.Fatalf("recording into the same store: %v", err)
	}
}

// TestNoObservations: the turn block names the latest frame, except with
// Options.NoObservations; the milestones are still scored.
func TestNoObservations(t *testing.T) {
	for _, off := range []bool{false, true} {
		f := newFixture(t, logTask, Options{NoObservations: off})
		b := f.act(t, "go_to x=5 z=0 within=1; mine_ahead")
		if has := strings.Contains(b, "[FRAME]"); has == off {
			t.Errorf("NoObservations %v: [FRAME] in the block %v:\n%s", off, has, b)
		}
		if !strings.Contains(b, "MILESTONE") {
			t.Errorf("NoObservations %v: no milestone reached:\n%s", off, b)
		}
	}
}
