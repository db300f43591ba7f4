package fs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/posixtest"
)

// TestPosixMine runs every case of go-fuse's POSIX suite (posixtest.All,
// v2.12.1: 32 cases, including the Linux-only FallocateKeepSize and
// Tmpfile) against mine/. All must pass; the only exceptions, skipped here
// and listed in docs/MOUNT.md, are
//   - XAttr, XAttrLarge: the mount serves no extended attributes
//     (getxattr answers ENOSYS so `ls -l` costs no GETXATTR round trips;
//     see refuse.go and docs/MOUNT.md).
//
// A case that skips itself (posixtest skips RenameOpenDir when fstat of a
// directory renamed over while open fails, DirectIO without O_DIRECT,
// Tmpfile without O_TMPFILE) fails this test: a skip would hide a gap.
func TestPosixMine(t *testing.T) {
	skip := map[string]string{
		"XAttr":      "no extended attributes (ENOSYS/ENOTSUP by design)",
		"XAttrLarge": "no extended attributes (ENOSYS/ENOTSUP by design)",
	}
	tm := mountCopy(t, Options{})
	names := make([]string, 0, len(posixtest.All))
	for n := range posixtest.All {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, want := range []string{"RenameOpenDir", "DirectIO", "Tmpfile", "FallocateKeepSize", "FcntlFlockLocksFile"} {
		if _, ok := posixtest.All[want]; !ok {
			t.Errorf("posixtest.All has no %s (go-fuse changed: review this test)", want)
		}
	}
	passed := 0
	for i, name := range names {
		fn := posixtest.All[name]
		var sub *testing.T
		t.Run(name, func(t *testing.T) {
			sub = t
			if why, ok := skip[name]; ok {
				t.Skip(why)
			}
			dir := tm.path("mine", "posix", strings.ReplaceAll(name, "/", "_")+"-"+string(rune('a'+i%26)))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			fn(t, dir)
		})
		_, expected := skip[name]
		switch {
		case sub.Skipped() && !expected:
			t.Errorf("posixtest %s skipped itself on mine/ (see its log): not an accepted exception", name)
		case !sub.Skipped() && !sub.Failed():
			passed++
		}
	}
	t.Logf("posixtest on mine/: %d of %d cases pass, %d skipped by design", passed, len(names), len(skip))
}

// TestCatalog: /mine/procedures/.catalog is served from
// Hooks.ProcedureCatalog, read-only and not listed.
func TestCatalog(t *testing.T) {
	var mu sync.Mutex
	n := 0
	tm := mountCopy(t, Options{Hooks: Hooks{ProcedureCatalog: func(ctx context.Context) ([]byte, error) {
		mu.Lock()
		defer mu.Unlock()
		n++
		if _, ok := ctx.Deadline(); !ok {
			return nil, errors.New("no deadline")
		}
		return []byte("dig.sh  calls 3  last ok  ep_000012\n"), nil
	}}})
	os.MkdirAll(tm.path("mine", "procedures"), 0o755)
	b, err := os.ReadFile(tm.path("mine", "procedures", ".catalog"))
	if err != nil || string(b) != "dig.sh  calls 3  last ok  ep_000012\n" {
		t.Fatalf(".catalog: %q %v", b, err)
	}
	if err := os.WriteFile(tm.path("mine", "procedures", ".catalog"), []byte("x"), 0o644); !errors.Is(err, os.ErrPermission) && !strings.Contains(errString(err), "read-only") {
		t.Errorf("write .catalog: %v, want EROFS", err)
	}
	ents, _ := os.ReadDir(tm.path("mine", "procedures"))
	for _, e := range ents {
		if e.Name() == ".catalog" {
			t.Errorf(".catalog is listed")
		}
	}
	// Without the hook the name is an ordinary (absent) file.
	tm2 := mountCopy(t, Options{})
	if _, err := os.Stat(filepath.Join(tm2.mnt, "mine", "procedures", ".catalog")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("no hook: stat .catalog = %v", err)
	}
	_ = time.Second
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestCitedBy: episodes/<id>/cited-by is listed in episode dirs and
// served from Hooks.CitedBy with the store-relative episode dir.
func TestCitedBy(t *testing.T) {
	store := copyFixture(t)
	addPreviousLife(t, store, 1, 5)
	tm := mountStore(t, store, Options{Hooks: Hooks{CitedBy: func(ctx context.Context, dir string) ([]byte, error) {
		return []byte("mine/notes.md  (" + dir + ")\n"), nil
	}}})
	for _, dir := range []string{"episodes/ep_000003", "previous/life_1/episodes/ep_000002"} {
		b, err := os.ReadFile(tm.path(dir, "cited-by"))
		if err != nil || string(b) != "mine/notes.md  ("+dir+")\n" {
			t.Errorf("%s/cited-by: %q %v", dir, b, err)
		}
		out := mustRun(t, "ls", tm.path(dir))
		if !strings.Contains(out, "cited-by\n") || !strings.Contains(out, "outcome.json\n") {
			t.Errorf("ls %s: %q", dir, out)
		}
	}
	if out := mustRun(t, "ls", tm.path("episodes")); strings.Contains(out, "cited-by") {
		t.Errorf("cited-by listed in episodes/")
	}
	if _, err := os.Stat(tm.path("episodes", "ep_000003", "state", "cited-by")); err == nil {
		t.Errorf("cited-by resolves below an episode dir")
	}
}

// TestCitedByNotComputedByListings: listings of episode directories
// (READDIRPLUS sends attributes with them) do not compute cited-by, whose
// content comes from every citation and every life's index; reading it
// does. find, ls and ls -l of episodes/ must not call the hook.
func TestCitedByNotComputedByListings(t *testing.T) {
	var calls atomic.Int64
	tm := mountCopy(t, Options{Hooks: Hooks{CitedBy: func(ctx context.Context, dir string) ([]byte, error) {
		calls.Add(1)
		return []byte("mine/notes.md\n"), nil
	}}})
	for _, script := range []string{
		"cd " + tm.mnt + " && find episodes -name action.json | wc -l",
		"ls " + tm.path("episodes", "ep_000003"),
		"ls -l " + tm.path("episodes"),
		"cd " + tm.mnt + " && find episodes -name cited-by | wc -l",
	} {
		mustSh(t, script)
		if n := calls.Load(); n != 0 {
			t.Fatalf("%s: the cited-by hook ran %d times", script, n)
		}
	}
	if b, err := os.ReadFile(tm.path("episodes", "ep_000003", "cited-by")); err != nil || string(b) != "mine/notes.md\n" || calls.Load() == 0 {
		t.Errorf("cited-by: %q, %v, hook calls %d", b, err, calls.Load())
	}
}

type fakeTree map[string]string // path -> content; "dir/" keys are dirs

func (f fakeTree) ReadDir(ctx context.Context, dir string) ([]string, error) {
	var out []string
	for p := range f {
		d, base := filepath.Split(strings.TrimSuffix(p, "/"))
		if strings.TrimSuffix(d, "/") == dir {
			if strings.HasSuffix(p, "/") {
				base += "/"
			}
			out = append(out, base)
		}
	}
	sort.Strings(out)
	return out, nil
}

func (f fakeTree) Open(ctx context.Context, p string) ([]byte, bool, error) {
	if _, ok := f[p+"/"]; ok {
		return nil, true, nil
	}
	if p == "bad" {
		return nil, false, errors.New("bad: the tree refuses this name")
	}
	c, ok := f[p]
	if !ok {
		return nil, false, os.ErrNotExist
	}
	return []byte(c), false, nil
}

// TestTrees: Hooks.Trees appear as read-only top-level directories.
func TestTrees(t *testing.T) {
	tree := fakeTree{"skills/": "", "skills/dig.md": "dig down\n", "summary.txt": "2 skills\n"}
	tm := mountCopy(t, Options{Hooks: Hooks{Trees: map[string]VirtualTree{"consolidate": tree}}})
	out := mustSh(t, "cd "+tm.mnt+" && ls && ls consolidate consolidate/skills && cat consolidate/skills/dig.md consolidate/summary.txt")
	for _, want := range []string{"consolidate\n", "skills\nsummary.txt\n", "dig.md\n", "dig down\n2 skills\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if err := os.WriteFile(tm.path("consolidate", "summary.txt"), []byte("x"), 0o644); err == nil {
		t.Errorf("write into a tree succeeded")
	}
	if _, err := os.Stat(tm.path("consolidate", "bad")); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("stat consolidate/bad: %v, want EINVAL", err)
	}
	b, _ := os.ReadFile(tm.path(".errors"))
	if !strings.Contains(string(b), "the tree refuses this name") {
		t.Errorf(".errors lacks the tree's message:\n%s", b)
	}
}
