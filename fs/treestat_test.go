package fs

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
)

// statTree is a fakeTree that sizes its files by Stat (except those it
// says it cannot) and counts the Opens of each path.
type statTree struct {
	fakeTree
	unsized map[string]bool // Stat answers ErrUnsupported
	mu      sync.Mutex
	opens   map[string]int
}

func (s *statTree) Open(ctx context.Context, p string) ([]byte, bool, error) {
	s.mu.Lock()
	s.opens[p]++
	s.mu.Unlock()
	return s.fakeTree.Open(ctx, p)
}

func (s *statTree) Stat(ctx context.Context, p string) (int64, bool, error) {
	if _, ok := s.fakeTree[p+"/"]; ok || p == "" {
		return 0, true, nil
	}
	if s.unsized[p] {
		return 0, false, errors.ErrUnsupported
	}
	c, ok := s.fakeTree[p]
	if !ok {
		return 0, false, os.ErrNotExist
	}
	return int64(len(c)), false, nil
}

func (s *statTree) openCount(p string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opens[p]
}

// TestTreeStat: a tree that implements VirtualStatter is sized by Stat at
// lookup and getattr (ls -l, stat), so its files' bytes are produced only
// when read, with the size Stat gave; a file Stat cannot size is read
// with Open, and a missing one is ENOENT.
func TestTreeStat(t *testing.T) {
	tree := &statTree{
		fakeTree: fakeTree{"frames/": "", "frames/a.png": "AAAA", "frames/b.png": "BBBBBBBB", "view.png": "rendered"},
		unsized:  map[string]bool{"view.png": true},
		opens:    map[string]int{},
	}
	tm := mountCopy(t, Options{Hooks: Hooks{Trees: map[string]VirtualTree{"agents": tree}}})
	out := mustSh(t, "ls -l "+tm.path("agents", "frames")+" && stat -c '%s %n' "+tm.path("agents", "frames", "b.png"))
	for _, want := range []string{" 4 ", " 8 ", "8 " + tm.path("agents", "frames", "b.png")} {
		if !strings.Contains(out, want) {
			t.Errorf("ls -l / stat output lacks %q:\n%s", want, out)
		}
	}
	for _, p := range []string{"frames/a.png", "frames/b.png", "frames"} {
		if n := tree.openCount(p); n != 0 {
			t.Errorf("%s opened %d times by ls -l and stat, want 0 (sized by Stat)", p, n)
		}
	}
	b, err := os.ReadFile(tm.path("agents", "frames", "b.png"))
	if err != nil || string(b) != "BBBBBBBB" || tree.openCount("frames/b.png") == 0 {
		t.Errorf("read frames/b.png: %q, %v, %d opens", b, err, tree.openCount("frames/b.png"))
	}
	if st, err := os.Stat(tm.path("agents", "view.png")); err != nil || st.Size() != int64(len("rendered")) || tree.openCount("view.png") == 0 {
		t.Errorf("stat view.png (Stat unsupported): %v, %v, %d opens; want its size read by Open", st, err, tree.openCount("view.png"))
	}
	if _, err := os.Stat(tm.path("agents", "frames", "nosuch.png")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stat of a missing file: %v, want not exist", err)
	}
}
