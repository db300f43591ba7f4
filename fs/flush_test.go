package fs

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestReadOnlyOpensNoFlush: with per-open handles (Options.PerOpen),
// closing a read-only record file (an episode file, index.jsonl,
// now/state.json, a virtual file) sends no FLUSH to the daemon
// (FOPEN_NOFLUSH: one round trip less per open), while a mine/ file,
// which may have been written, is still flushed on close.
func TestReadOnlyOpensNoFlush(t *testing.T) {
	buf := captureRequests(t)
	tm := mountCopy(t, Options{NoAccessLog: true, Debug: true, PerOpen: true})
	for _, p := range []string{"episodes/ep_000003/outcome.json", "index.jsonl", "now/state.json", "README.md", "mine/notes.md"} {
		if _, err := os.ReadFile(tm.path(p)); err != nil {
			t.Fatal(err)
		}
	}
	// Request log lines: `rx 56: OPEN n2 …`, n2 named by its LOOKUP.
	names := nodeNames(buf.String())
	rxOp := regexp.MustCompile(`^rx \d+: (OPEN|FLUSH) n(\d+) `)
	opened, flushed := map[string]bool{}, map[string]bool{}
	for _, l := range strings.Split(buf.String(), "\n") {
		if m := rxOp.FindStringSubmatch(l); m != nil {
			if m[1] == "OPEN" {
				opened[names[m[2]]] = true
			} else {
				flushed[names[m[2]]] = true
			}
		}
	}
	for _, n := range []string{"outcome.json", "index.jsonl", "state.json", "README.md", "notes.md"} {
		if !opened[n] {
			t.Fatalf("no OPEN of %s in the request log (parsed %v); log:\n%s", n, opened, head(buf.String(), 80))
		}
	}
	for _, n := range []string{"outcome.json", "index.jsonl", "state.json", "README.md"} {
		if flushed[n] {
			t.Errorf("closing read-only %s sent a FLUSH", n)
		}
	}
	if !flushed["notes.md"] {
		t.Errorf("closing mine/notes.md sent no FLUSH (mine/ must stay flushed)")
	}
}
