package consolidate

import (
	"context"
	"os"
	"strings"
	"testing"
)

// The tree computes once while the store is unchanged and again after a
// row is appended to index.jsonl (or a procedure added).
func TestTreeCache(t *testing.T) {
	s := constructed(t)
	tr := &Tree{Store: s, Config: DefaultConfig()}
	read := func(p string) string {
		t.Helper()
		b, _, err := tr.Open(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	fb := read("feedback.jsonl")
	for _, p := range []string{"feedback.jsonl", "digest.md", "retrieve/call=go_to", "usage.jsonl"} {
		read(p)
	}
	if names, err := tr.ReadDir(context.Background(), "candidates"); err != nil || len(names) == 0 {
		t.Fatalf("candidates: %v %v", names, err)
	}
	if tr.computes != 1 {
		t.Fatalf("%d computations for 6 reads of an unchanged store, want 1", tr.computes)
	}
	if strings.Contains(fb, "ep_000020") {
		t.Fatal("ep_000020 before it is appended")
	}
	f, err := os.OpenFile(s.Path("index.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(row(20, "harvest_tree", 200, `, "inventory_delta": {"log": 1}`) + "\n")
	f.Close()
	fb = read("feedback.jsonl")
	if tr.computes != 2 || !strings.Contains(fb, `"episode":"ep_000020"`) {
		t.Fatalf("after an append: %d computations, feedback has ep_000020: %v", tr.computes, strings.Contains(fb, "ep_000020"))
	}
	read("digest.md")
	if tr.computes != 2 {
		t.Fatalf("%d computations, want 2", tr.computes)
	}
	// A new procedure makes its name a known step.
	os.MkdirAll(s.Path("mine", "procedures"), 0o755)
	os.WriteFile(s.Path("mine", "procedures", "climb.sh"), []byte("# climb: up\n"), 0o644)
	read("digest.md")
	if tr.computes != 3 {
		t.Fatalf("after a new procedure: %d computations, want 3", tr.computes)
	}
}
