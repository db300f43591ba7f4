package fs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fileTree is a statTree whose file "big.jsonl" lives on local disk
// (VirtualFileOpener) and grows: it serves the first served bytes of it.
type fileTree struct {
	*statTree
	path   string
	mu     sync.Mutex
	served int64
}

func (f *fileTree) Stat(ctx context.Context, p string) (int64, bool, error) {
	if p == "big.jsonl" {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.served, false, nil
	}
	return f.statTree.Stat(ctx, p)
}

func (f *fileTree) OpenFile(ctx context.Context, p string) (*os.File, int64, bool, error) {
	if p != "big.jsonl" {
		return nil, 0, false, nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	file, err := os.Open(f.path)
	return file, f.served, err == nil, err
}

// TestTreeFile: a tree's file kept on local disk is served from it, never
// through Open (which would hold it whole in memory), up to the length
// the tree gives at open, even while the file has more (a row being
// appended); when that length grows, a new open reads the new rows; the
// other files are served as before.
func TestTreeFile(t *testing.T) {
	dir := t.TempDir()
	local := filepath.Join(dir, "big.jsonl")
	var want strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&want, `{"id": "ep_%06d", "summary": "a row"}`+"\n", i)
	}
	if err := os.WriteFile(local, []byte(want.String()+`{"id": "ep_9999`), 0o644); err != nil { // a torn tail
		t.Fatal(err)
	}
	tree := &fileTree{statTree: &statTree{fakeTree: fakeTree{"small.txt": "small"}, opens: map[string]int{}}, path: local, served: int64(want.Len())}
	tm := mountCopy(t, Options{Hooks: Hooks{Trees: map[string]VirtualTree{"agents": tree}}})
	p := tm.path("agents", "big.jsonl")
	if st, err := os.Stat(p); err != nil || st.Size() != int64(want.Len()) {
		t.Fatalf("stat: %v %v, want %d bytes", st, err, want.Len())
	}
	if got := mustSh(t, "wc -l < "+p); strings.TrimSpace(got) != "20000" {
		t.Errorf("wc -l = %q, want 20000 (the torn tail left out)", got)
	}
	b, err := os.ReadFile(p)
	if err != nil || string(b) != want.String() {
		t.Errorf("read: %d bytes (%v), want the %d served", len(b), err, want.Len())
	}
	if got := mustSh(t, "tail -n 1 "+p); got != `{"id": "ep_019999", "summary": "a row"}`+"\n" {
		t.Errorf("tail -n 1 = %q", got)
	}
	// The row is complete now: the tree serves it.
	f, _ := os.OpenFile(local, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`9", "summary": "late"}` + "\n")
	f.Close()
	tree.mu.Lock()
	tree.served += int64(len(`{"id": "ep_99999", "summary": "late"}` + "\n"))
	tree.mu.Unlock()
	if got := mustSh(t, "tail -n 1 "+p); got != `{"id": "ep_99999", "summary": "late"}`+"\n" {
		t.Errorf("tail -n 1 after the row completed = %q", got)
	}
	if n := tree.openCount("big.jsonl"); n != 0 {
		t.Errorf("big.jsonl went through Open %d times, want 0", n)
	}
	if b, err := os.ReadFile(tm.path("agents", "small.txt")); err != nil || string(b) != "small" {
		t.Errorf("small.txt: %q %v", b, err)
	}
	if err := os.WriteFile(p, []byte("x"), 0o644); err == nil {
		t.Errorf("wrote to a tree's local file through the mount")
	}
}
