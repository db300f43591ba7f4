package fs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// TestStatAheadSameNodes: a node made from a stat taken ahead is the one
// go-fuse's LoopbackNode.Lookup makes (identity, attributes, timeouts),
// for each kind of backing entry. It fails if go-fuse changes how its
// loopback numbers nodes (loopbackID copies that).
func TestStatAheadSameNodes(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "file"), []byte("some bytes"), 0o644))
	must(os.Mkdir(filepath.Join(dir, "dir"), 0o755))
	must(os.Symlink("file", filepath.Join(dir, "link")))
	must(syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600))
	must(os.Chtimes(filepath.Join(dir, "file"), time.Unix(1e9, 123456789), time.Unix(1.5e9, 987654321)))

	root, err := (&roEnv{}).newROTree(dir, saltEpisodes, time.Hour, "episode")
	if err != nil {
		t.Fatal(err)
	}
	gofs.NewNodeFS(root, &gofs.Options{}) // gives root its bridge
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	ctx := context.Background()
	for _, name := range []string{"file", "dir", "link", "fifo"} {
		var want fuse.EntryOut
		ch, errno := root.Lookup(ctx, name, &want)
		if errno != 0 {
			t.Fatalf("Lookup %s: %v", name, errno)
		}
		a := &aheadStat{name: name}
		if err := statxAt(fd, name, &a.st, &a.btime); err != nil {
			t.Fatal(err)
		}
		var got fuse.EntryOut
		ach := root.lookupAhead(ctx, a, &got)
		if ach.StableAttr() != ch.StableAttr() {
			t.Errorf("%s: node %+v from the stat taken ahead, %+v from Lookup", name, ach.StableAttr(), ch.StableAttr())
		}
		if got != want {
			t.Errorf("%s: entry\n%+v from the stat taken ahead,\n%+v from Lookup", name, got, want)
		}
		if _, ok := ach.Operations().(*roNode); !ok {
			t.Errorf("%s: node ops %T, want *roNode", name, ach.Operations())
		}
	}
}

// TestStatAheadQueue: stats come in listing order, at most
// statAheadWindow ahead; take drops what was listed before the name it
// finds and leaves the queue alone for a name it does not have; stop ends
// the goroutine even while it waits for room.
func TestStatAheadQueue(t *testing.T) {
	dir := t.TempDir()
	n := statAheadWindow + 500
	for i := 0; i < n; i++ {
		if err := os.WriteFile(filepath.Join(dir, "f"+strconv.Itoa(i)), []byte(strconv.Itoa(i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	names, err := f.Readdirnames(-1) // the order the goroutine lists in
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	s := startStatAhead(dir)
	queued := func() int {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.queue)
	}
	for deadline := time.Now().Add(10 * time.Second); queued() < statAheadWindow; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d stats queued after 10 s, want %d", queued(), statAheadWindow)
		}
	}
	// The goroutine is blocked on the full window, not still going: it
	// had 3,000 names to stat.
	waitBlocked(t, s)
	if q := queued(); q != statAheadWindow {
		t.Fatalf("%d stats queued, want at most the window %d", q, statAheadWindow)
	}
	a, ok := s.take(names[0])
	if !ok || a.name != names[0] || a.st.Size != int64(len(names[0])-1) {
		t.Fatalf("take %s: %+v, %v", names[0], a, ok)
	}
	if _, ok := s.take("not-there"); ok || queued() < statAheadWindow-1 {
		t.Fatalf("take of a name not listed: %v, queue %d", ok, queued())
	}
	if a, ok := s.take(names[10]); !ok || a.name != names[10] {
		t.Fatalf("take %s: %+v, %v", names[10], a, ok)
	}
	if _, ok := s.take(names[5]); ok {
		t.Errorf("take %s after %s: found, want dropped", names[5], names[10])
	}
	// Room made by the takes lets the goroutine go on.
	for deadline := time.Now().Add(10 * time.Second); queued() < statAheadWindow; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d stats queued after takes, want the window refilled", queued())
		}
	}
	if a, ok := s.take(names[statAheadWindow+5]); !ok || a.name != names[statAheadWindow+5] {
		t.Errorf("take %s: %+v, %v", names[statAheadWindow+5], a, ok)
	}
	s.stop()
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		t.Fatal("stat-ahead goroutine still running 10 s after stop")
	}
	if _, ok := s.take(names[n-1]); ok {
		t.Error("take after stop found a stat")
	}
}

// TestStatAheadListing: a cold `ls -l` of a large episodes/ through the
// kernel-cached mount takes its stats ahead, serves every lookup after
// the one that starts it from them, and lists exactly what a mount
// without stat-ahead lists (inode numbers, modes, sizes, times). The
// lookup that starts the stat-ahead waits here for its goroutine to list
// the whole directory, so the count does not depend on the scheduler;
// how much it gains when they race is in bench/mount.md.
func TestStatAheadListing(t *testing.T) {
	store := copyFixture(t)
	for i := 0; i < 1500; i++ {
		d := filepath.Join(store, "episodes", fmt.Sprintf("ep_%06d", 100+i))
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			if err := os.WriteFile(filepath.Join(d, "state.json"), []byte(strconv.Itoa(i)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.Symlink("ep_000100", filepath.Join(store, "episodes", "latest")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(listingQuiet + 100*time.Millisecond) // listings of a directory changed just now are not wrapped
	var started atomic.Int32
	statAheadStarted = func(s *statAhead) {
		started.Add(1)
		select {
		case <-s.done: // the whole directory is queued: it is smaller than the window
		case <-time.After(10 * time.Second):
			t.Error("the stat-ahead goroutine has not listed the directory after 10 s")
		}
	}
	defer func() { statAheadStarted = nil }()
	list := func(after int) (string, int64) {
		t.Helper()
		old := statAheadAfter
		statAheadAfter = after
		defer func() { statAheadAfter = old }()
		tm := mountStore(t, store, Options{NoAccessLog: true})
		if !tm.srv.m.cached {
			t.Fatal("episodes/ is not a mount of its own (as root, without PerOpen, it must be)")
		}
		out := mustSh(t, "ls -lin --time-style=+%s.%N "+tm.path("episodes"))
		hits := tm.srv.m.ro.statAheadHits.Load()
		tm.unmount()
		return out, hits
	}
	want, none := list(1 << 30)
	if none != 0 || started.Load() != 0 {
		t.Errorf("without stat-ahead: %d stat-aheads started, %d lookups served by one; want 0", started.Load(), none)
	}
	const after = 256
	got, hits := list(after)
	entries := strings.Count(want, "\n") - 1 // less the "total" line
	if started.Load() != 1 || hits != int64(entries-after+1) {
		t.Errorf("with stat-ahead: %d started, %d of %d lookups served by it; want 1 started and every lookup from the %dth (%d)",
			started.Load(), hits, entries, after, entries-after+1)
	}
	if got != want {
		t.Errorf("ls -lin with stat-ahead differs from without:\n%s\nwant\n%s", firstDiff(got, want), firstDiff(want, got))
	}
}

// firstDiff returns the first line of a that differs from b's line at
// the same place, with its number.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i, l := range al {
		if i >= len(bl) || bl[i] != l {
			return fmt.Sprintf("line %d: %s", i+1, l)
		}
	}
	return fmt.Sprintf("(%d lines, all in the other)", len(al))
}

// waitBlocked waits until the goroutine of s waits for room in its
// window (its stack is in sync.Cond.Wait under statAhead.run), so a
// check of the queue after it sees everything it will queue.
func waitBlocked(t *testing.T, s *statAhead) {
	t.Helper()
	buf := make([]byte, 1<<20)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
			if strings.Contains(g, "(*statAhead).run") && strings.Contains(g, "sync.(*Cond).Wait") {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the stat-ahead goroutine does not wait for room after 10 s")
		}
	}
}
