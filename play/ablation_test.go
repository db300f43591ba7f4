package play

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mfm-project/mfm/episodes"
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
