package play

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mfm-project/mfm/episodes"
)

// TestListProcedureParams: mfmd act --list shows a procedure with the
// parameters its PARAMS declares and their defaults, and what each is.
func TestListProcedureParams(t *testing.T) {
	f := newFixture(t, logTask, Options{})
	dir := f.store.Path(episodes.MineDir, "procedures")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src := "\"\"\"dig_cobble: dig down n blocks and mine cobble.\"\"\"\nimport json, sys\nPARAMS = {\n    \"n\": 3,  # blocks\n    \"craft\": {\"default\": True, \"help\": \"craft a stone pickaxe after\"},\n}\nprint(json.dumps({\"actions\": []}))\n"
	if err := os.WriteFile(filepath.Join(dir, "dig_cobble.py"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	list := f.sess.ListAtoms()
	for _, want := range []string{
		"  dig_cobble(n=3, craft=True)\n      dig down n blocks and mine cobble.\n",
		"        craft: craft a stone pickaxe after\n",
	} {
		if !strings.Contains(list, want) {
			t.Errorf("--list lacks %q:\n%s", want, list)
		}
	}
}
