package fs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// fakeViewer treats names containing "@" (and map/ names) as views: "@ok"
// renders the path itself as the bytes, anything else is malformed.
type fakeViewer struct{}

func (fakeViewer) View(ctx context.Context, rel string) ([]byte, bool, error) {
	if !strings.Contains(rel, "@") && !strings.HasPrefix(rel, "map/") && !strings.HasPrefix(rel, "previous/life_1/map/") {
		return nil, false, nil
	}
	if strings.HasSuffix(rel, "@ok.png") || rel == "map/here.txt" || rel == "previous/life_1/map/here.txt" {
		return []byte("rendered " + rel), true, nil
	}
	return nil, true, errors.New("view " + rel + ": unknown operation (accepted: @ok)")
}

func (fakeViewer) Sheet(ctx context.Context, frames, labels []string) ([]byte, error) {
	return []byte(strings.Join(labels, ",")), nil
}

func (fakeViewer) Grammar() string { return "views: FRAME@ok.png" }

// TestViews resolves views beside frames and under map/ through the
// Viewer hook: rendered on lookup, never listed, malformed names EINVAL
// with the message in /.errors, other missing names ENOENT.
func TestViews(t *testing.T) {
	store := copyFixture(t)
	addPreviousLife(t, store, 1, 5)
	tm := mountStore(t, store, Options{Hooks: Hooks{Viewer: fakeViewer{}}})
	obs := tm.path("episodes", "ep_000003")
	b, err := os.ReadFile(obs + "/image@ok.png")
	if err != nil || string(b) != "rendered episodes/ep_000003/image@ok.png" {
		t.Fatalf("view beside a frame: %q, %v", b, err)
	}
	if st, err := os.Stat(obs + "/image@ok.png"); err != nil || st.Size() != int64(len(b)) {
		t.Fatalf("stat of a view: %v, %v", st, err)
	}
	ents, err := os.ReadDir(obs)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.Contains(e.Name(), "@") {
			t.Errorf("readdir lists a view: %s", e.Name())
		}
	}
	if _, err := os.Stat(obs + "/image@bad.png"); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("malformed view: %v, want EINVAL", err)
	}
	if _, err := os.Stat(obs + "/nothing.png"); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("missing non-view: %v, want ENOENT", err)
	}
	if err := os.WriteFile(obs+"/image@ok.png", []byte("x"), 0o644); err == nil {
		t.Errorf("write to a view succeeded")
	}
	errs, _ := os.ReadFile(tm.path(".errors"))
	if !strings.Contains(string(errs), "unknown operation (accepted: @ok)") {
		t.Errorf(".errors lacks the viewer's message:\n%s", errs)
	}
	if b, err := os.ReadFile(tm.path("map", "here.txt")); err != nil || string(b) != "rendered map/here.txt" {
		t.Errorf("map/here.txt: %q, %v", b, err)
	}
	if _, err := os.Stat(tm.path("map", "there.png")); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("malformed map: %v, want EINVAL", err)
	}

	// An earlier life: its maps under previous/life_N/map/ (asked of the
	// Viewer with that prefix, not listed), views beside its frames.
	life := tm.path("previous", "life_1")
	if b, err := os.ReadFile(life + "/map/here.txt"); err != nil || string(b) != "rendered previous/life_1/map/here.txt" {
		t.Errorf("previous/life_1/map/here.txt: %q, %v", b, err)
	}
	if st, err := os.Stat(life + "/map"); err != nil || !st.IsDir() {
		t.Errorf("stat previous/life_1/map: %v, %v", st, err)
	}
	if _, err := os.Stat(life + "/map/there.png"); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("malformed map of an earlier life: %v, want EINVAL", err)
	}
	if out := mustRun(t, "ls", life); strings.Contains(out, "map") {
		t.Errorf("ls previous/life_1 lists map/: %q", out)
	}
	if _, err := os.Stat(life + "/episodes/map"); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("map/ resolves below a life's root: %v", err)
	}
	if _, err := os.Stat(tm.path("previous", "life_2", "map", "here.txt")); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("map of a missing life: %v, want ENOENT", err)
	}
	rel := "previous/life_1/episodes/ep_000002/image@ok.png"
	if b, err := os.ReadFile(tm.path(rel)); err != nil || string(b) != "rendered "+rel {
		t.Errorf("view beside an earlier life's episode: %q, %v", b, err)
	}
}

// countingViewer renders "render N of REL" (N counts every View call),
// except views ending in @stable.png, which it says never change and
// renders as "stable REL".
type countingViewer struct {
	mu    sync.Mutex
	calls map[string]int
}

func (v *countingViewer) View(ctx context.Context, rel string) ([]byte, bool, error) {
	if !strings.Contains(rel, "@") && !strings.HasPrefix(rel, "map/") && !strings.Contains(rel, "/map/") {
		return nil, false, nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.calls[rel]++
	if v.Stable(rel) {
		return []byte("stable " + rel), true, nil
	}
	return []byte(fmt.Sprintf("render %d of %s", v.calls[rel], rel)), true, nil
}

func (v *countingViewer) n(rel string) int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.calls[rel]
}

func (v *countingViewer) Stable(rel string) bool { return strings.HasSuffix(rel, "@stable.png") }

func (*countingViewer) Sheet(ctx context.Context, frames, labels []string) ([]byte, error) {
	return nil, errors.New("no sheets")
}

func (*countingViewer) Grammar() string { return "views: FRAME@stable.png FRAME@live.png map/NAME" }

// TestViewCaching: a view the Viewer calls stable is rendered on lookup
// and read (the node keeps no bytes, fixedChild) and then served by the
// kernel (no View call, no READ reaches the daemon on a repeated cat); a
// live view (map/, or one the Viewer does not call
// stable) is rendered again on each access, so it follows the record.
// Without a StableViewer nothing is cached.
func TestViewCaching(t *testing.T) {
	v := &countingViewer{calls: map[string]int{}}
	tm := mountCopy(t, Options{NoAccessLog: true, Hooks: Hooks{Viewer: v}})
	stable := "episodes/ep_000003/image@stable.png"
	want := "stable " + stable
	renders := 0
	for i := 0; i < 3; i++ {
		before := tm.srv.m.virtualReads.Load()
		out := mustRun(t, "cat", tm.path(stable))
		if out != want {
			t.Fatalf("cat %d of a stable view: %q, want %q", i, out, want)
		}
		if st, err := os.Stat(tm.path(stable)); err != nil || st.Size() != int64(len(want)) {
			t.Fatalf("stat of a stable view: %v %v", st, err)
		}
		reads := tm.srv.m.virtualReads.Load() - before
		if i > 0 && reads != 0 {
			t.Errorf("cat %d of a stable view sent %d READs to the daemon (want 0: kernel page cache)", i, reads)
		}
		if i == 0 {
			renders = v.n(stable)
		} else if n := v.n(stable); n != renders {
			t.Errorf("cat %d of a stable view rendered it again (%d renders, %d after the first cat)", i, n, renders)
		}
	}
	if renders < 1 || renders > 2 {
		t.Errorf("stable view rendered %d times by the first cat, want 1 or 2 (lookup, read)", renders)
	}
	for _, live := range []string{"episodes/ep_000003/image@live.png", "map/here@stable.png"} {
		for i := 1; i <= 3; i++ {
			out := mustRun(t, "cat", tm.path(live))
			want := fmt.Sprintf("render %d of %s", v.n(live), live)
			if v.Stable(live) {
				want = "stable " + live
			}
			if out != want || v.n(live) < i {
				t.Errorf("cat %d of live %s: %q (%d renders)", i, live, out, v.n(live))
			}
		}
	}
	// A Viewer without Stable: nothing is cached.
	v2 := &plainViewer{countingViewer{calls: map[string]int{}}}
	tm2 := mountCopy(t, Options{NoAccessLog: true, Hooks: Hooks{Viewer: v2}})
	for i := 1; i <= 2; i++ {
		mustRun(t, "cat", tm2.path(stable))
	}
	if n := v2.n(stable); n < 2 {
		t.Errorf("without StableViewer a view was rendered %d times for 2 reads", n)
	}
}

// plainViewer hides countingViewer's Stable method.
type plainViewer struct{ c countingViewer }

func (p *plainViewer) View(ctx context.Context, rel string) ([]byte, bool, error) {
	return p.c.View(ctx, rel)
}
func (p *plainViewer) n(rel string) int { return p.c.n(rel) }
func (p *plainViewer) Sheet(ctx context.Context, f, l []string) ([]byte, error) {
	return p.c.Sheet(ctx, f, l)
}
func (p *plainViewer) Grammar() string { return p.c.Grammar() }
