package fanotify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// openEvent is one report of an Watch.
type openEvent struct {
	path string
	pid  int32
}

func (e openEvent) String() string { return fmt.Sprintf("%s by %d", e.path, e.pid) }

// openRecorder collects an Watch's reports.
type openRecorder struct {
	mu     sync.Mutex
	events []openEvent
	more   chan struct{} // closed and replaced at each event
}

func newOpenRecorder() *openRecorder { return &openRecorder{more: make(chan struct{})} }

func (r *openRecorder) onOpen(path string, pid int32) {
	r.mu.Lock()
	r.events = append(r.events, openEvent{path, pid})
	close(r.more)
	r.more = make(chan struct{})
	r.mu.Unlock()
}

func (r *openRecorder) snapshot() []openEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// waitFor waits until an event for path arrived and returns all events
// so far; it fails the test after d.
func (r *openRecorder) waitFor(t testing.TB, path string, d time.Duration) []openEvent {
	t.Helper()
	return r.wait(t, d, fmt.Sprintf("an open event for %s", path), func(ev []openEvent) bool {
		return slices.ContainsFunc(ev, func(e openEvent) bool { return e.path == path })
	})
}

// waitN waits until n events arrived and returns them; it fails the
// test after d.
func (r *openRecorder) waitN(t testing.TB, n int, d time.Duration) []openEvent {
	t.Helper()
	return r.wait(t, d, fmt.Sprintf("%d open events", n), func(ev []openEvent) bool { return len(ev) >= n })
}

// wait returns the events once done says they are enough; it fails the
// test (naming what it waited for) after d.
func (r *openRecorder) wait(t testing.TB, d time.Duration, what string, done func([]openEvent) bool) []openEvent {
	t.Helper()
	deadline := time.After(d)
	for {
		r.mu.Lock()
		if done(r.events) {
			ev := slices.Clone(r.events)
			r.mu.Unlock()
			return ev
		}
		more := r.more
		r.mu.Unlock()
		select {
		case <-more:
		case <-deadline:
			t.Fatalf("no %s within %v; events: %v", what, d, r.snapshot())
		}
	}
}

// needRoot skips t unless it runs as root (fanotify mount marks and
// tmpfs mounts need CAP_SYS_ADMIN); under CI=true it fails instead.
func needRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("CI: the fanotify tests must run (as root)")
	}
	t.Skip("fanotify mount marks need root")
}

// privateTmpfs mounts a small tmpfs on a new directory of dir.
func privateTmpfs(t testing.TB, dir string) string {
	t.Helper()
	mnt := filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=8m,mode=0755"); err != nil {
		t.Fatalf("mount tmpfs: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(mnt, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount tmpfs: %v", err)
		}
	})
	return mnt
}

// startWatch starts an Watch on mnt, closed at cleanup.
func startWatch(t testing.TB, mnt string, opts Options) (*Watch, *openRecorder) {
	t.Helper()
	rec := newOpenRecorder()
	w, err := WatchOpens(mnt, opts, rec.onOpen)
	if err != nil {
		t.Fatalf("WatchOpens: %v", err)
	}
	t.Cleanup(func() {
		if err := w.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return w, rec
}

// childOpen runs name args as a child process and returns its stdout
// and pid.
func childOpen(t testing.TB, name string, args ...string) (string, int32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	defer cancel()
	c := command(ctx, name, args...)
	var out strings.Builder
	c.Stdout = &out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	pid := int32(c.Process.Pid)
	if err := c.Wait(); err != nil {
		t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return out.String(), pid
}

// TestOpenWatchTmpfs: every open of a regular file on the watched mount
// by another process is reported once, with its path inside the mount
// and the opener's pid; directories, other mounts and the watching
// process itself are not.
func TestOpenWatchTmpfs(t *testing.T) {
	needRoot(t)
	need(t, "cat", "ls")
	dir := t.TempDir()
	mnt := privateTmpfs(t, dir)
	outside := filepath.Join(dir, "outside.txt")
	for p, data := range map[string]string{
		outside:                                 "outside\n",
		filepath.Join(mnt, "a.txt"):             "a\n",
		filepath.Join(mnt, "sub", "b.txt"):      "b\n",
		filepath.Join(mnt, "c.txt"):             "c\n",
		filepath.Join(mnt, "self.txt"):          "self\n",
		filepath.Join(mnt, "with space.txt"):    "space\n",
		filepath.Join(mnt, "sentinel", "s.txt"): "s\n",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w, rec := startWatch(t, mnt, Options{})

	var want []openEvent
	open := func(rel string) {
		t.Helper()
		out, pid := childOpen(t, "cat", filepath.Join(mnt, rel))
		if out == "" {
			t.Fatalf("cat %s: no output", rel)
		}
		want = append(want, openEvent{"/" + rel, pid})
	}
	childOpen(t, "ls", "-la", mnt, filepath.Join(mnt, "sub")) // directories: not reported
	childOpen(t, "cat", outside)                              // another mount: not reported
	if _, err := os.ReadFile(filepath.Join(mnt, "self.txt")); err != nil {
		t.Fatal(err) // this process (the daemon): not reported
	}
	if _, err := os.ReadDir(mnt); err != nil {
		t.Fatal(err)
	}
	open("a.txt")
	open("sub/b.txt")
	childOpen(t, "cat", outside)
	open("c.txt")
	open("c.txt") // opened twice (by two processes): two events
	open("with space.txt")
	open("sentinel/s.txt") // events are queued in order: all the rest came before it

	got := rec.waitFor(t, "/sentinel/s.txt", 10*time.Second)
	if !slices.Equal(got, want) {
		t.Errorf("events:\n got %v\nwant %v", got, want)
	}
	if n := w.Overflows(); n != 0 {
		t.Errorf("overflows = %d, want 0", n)
	}
}

// TestOpenWatchFixedNames: with FixedNames a file opened again is
// reported with the path its first open gave, found by its file handle,
// while each open of a file with two links gets the name it was opened
// by, and other files keep their own paths.
func TestOpenWatchFixedNames(t *testing.T) {
	needRoot(t)
	need(t, "cat")
	dir := t.TempDir()
	mnt := privateTmpfs(t, dir)
	for p, data := range map[string]string{"a.txt": "a\n", "sub/b.txt": "b\n", "h1": "h\n"} {
		p = filepath.Join(mnt, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(filepath.Join(mnt, "h1"), filepath.Join(mnt, "sub", "h2")); err != nil {
		t.Fatal(err)
	}
	w, rec := startWatch(t, mnt, Options{FixedNames: true})
	var want []openEvent
	for _, rel := range []string{"a.txt", "sub/b.txt", "a.txt", "h1", "sub/h2", "h1", "sub/b.txt", "a.txt"} {
		_, pid := childOpen(t, "cat", filepath.Join(mnt, rel))
		want = append(want, openEvent{"/" + rel, pid})
	}
	got := rec.waitN(t, len(want), 10*time.Second)
	if !slices.Equal(got, want) {
		t.Errorf("events:\n got %v\nwant %v", got, want)
	}
	if hits := w.pathHits.Load(); hits != 3 { // a.txt twice, sub/b.txt once; never h1 or sub/h2
		t.Errorf("paths found by file handle: %d, want 3", hits)
	}
}

// TestOpenWatchPathOf: paths come out relative to the mount ("/" for its
// root), without readlink's " (deleted)" mark for unlinked files, and
// files elsewhere are not under the mount.
func TestOpenWatchPathOf(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	mnt := privateTmpfs(t, dir)
	w, _ := startWatch(t, mnt, Options{})
	link := make([]byte, 4200)
	pathOf := func(p string, unlink bool) (string, bool) {
		t.Helper()
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if unlink {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
		}
		return w.pathOf(int(f.Fd()), link)
	}
	for _, name := range []string{"x.txt", "gone.txt"} {
		if err := os.WriteFile(filepath.Join(mnt, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "out.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(mnt+"x", 0o755); err != nil { // a sibling sharing the prefix
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mnt+"x", "y.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path   string
		unlink bool
		want   string
		ok     bool
	}{
		{mnt, false, "/", true},
		{filepath.Join(mnt, "x.txt"), false, "/x.txt", true},
		{filepath.Join(mnt, "gone.txt"), true, "/gone.txt", true},
		{filepath.Join(dir, "out.txt"), false, "", false},
		{filepath.Join(mnt+"x", "y.txt"), false, "", false},
	} {
		got, ok := pathOf(c.path, c.unlink)
		if got != c.want || ok != c.ok {
			t.Errorf("pathOf(%s, unlinked %v) = %q, %v; want %q, %v", c.path, c.unlink, got, ok, c.want, c.ok)
		}
	}
}

// TestOpenWatchRefuses: WatchOpens wants an absolute mount point (a mount
// mark on a plain directory would watch the filesystem around it).
func TestOpenWatchRefuses(t *testing.T) {
	dir := t.TempDir()
	for _, mnt := range []string{"relative/mnt", dir} {
		w, err := WatchOpens(mnt, Options{}, func(string, int32) {})
		if err == nil {
			w.Close()
			t.Errorf("WatchOpens(%s) succeeded", mnt)
		} else if !strings.Contains(err.Error(), "fanotify "+mnt) {
			t.Errorf("WatchOpens(%s): error without context: %v", mnt, err)
		}
	}
	if _, err := WatchOpens(dir, Options{}, nil); err == nil {
		t.Error("WatchOpens with nil onOpen succeeded")
	}
}

// TestOpenWatchUnprivileged: without CAP_SYS_ADMIN (a child running as
// nobody) the error wraps ErrUnavailable.
func TestOpenWatchUnprivileged(t *testing.T) {
	if os.Getenv("MFM_FANOTIFY_UNPRIV") != "" {
		mnt := os.Getenv("MFM_FANOTIFY_UNPRIV")
		_, err := WatchOpens(mnt, Options{}, func(string, int32) {})
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("as uid %d: WatchOpens: %v, want ErrUnavailable", os.Geteuid(), err)
		}
		t.Logf("as uid %d: %v", os.Geteuid(), err)
		return
	}
	needRoot(t)
	// nobody must reach the test binary and the mount point: a copy in
	// a directory open to all (t.TempDir and go test's are 0700).
	dir, err := os.MkdirTemp("", "mfm-fanotify-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	mnt := privateTmpfs(t, dir)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "fs.test")
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	defer cancel()
	c := command(ctx, exe, "-test.run=^TestOpenWatchUnprivileged$", "-test.count=1", "-test.v")
	c.Env = append(c.Env, "MFM_FANOTIFY_UNPRIV="+mnt)
	c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("child as nobody: %v\n%s", err, out)
	}
	t.Logf("child: %s", bytes.TrimSpace(out))
	if !strings.Contains(string(out), "fanotify unavailable") {
		t.Errorf("child output lacks the error:\n%s", out)
	}
}

// TestOpenWatchClose: Close with nothing pending returns well under
// 100 ms, is idempotent, and nothing is reported after it; the overflow
// counter exists and starts at 0.
func TestOpenWatchClose(t *testing.T) {
	needRoot(t)
	need(t, "cat")
	dir := t.TempDir()
	mnt := privateTmpfs(t, dir)
	if err := os.WriteFile(filepath.Join(mnt, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := newOpenRecorder()
	w, err := WatchOpens(mnt, Options{}, rec.onOpen)
	if err != nil {
		t.Fatalf("WatchOpens: %v", err)
	}
	if n := w.Overflows(); n != 0 {
		t.Errorf("overflows at start = %d", n)
	}
	childOpen(t, "cat", filepath.Join(mnt, "a.txt"))
	rec.waitFor(t, "/a.txt", 10*time.Second)
	// Close is prompt wherever the watcher is: waiting in poll, or
	// letting a batch gather (the stop eventfd wakes both).
	for i := 0; i < 3; i++ {
		start := time.Now()
		done := make(chan error, 1)
		go func() { done <- w.Close() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Close #%d: %v", i+1, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("Close #%d hangs", i+1)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("Close #%d took %v", i+1, d)
		} else {
			t.Logf("Close #%d: %v", i+1, d)
		}
	}
	// Close has returned, so the watcher's goroutine has too: an open
	// now must not be reported, and nothing is left to wait for.
	childOpen(t, "cat", filepath.Join(mnt, "a.txt"))
	if got := rec.snapshot(); len(got) != 1 {
		t.Errorf("events after Close: %v", got)
	}
	if n := w.Overflows(); n != 0 {
		t.Errorf("overflows = %d", n)
	}
}

// fuseCounts counts the requests a test FUSE server got, by opcode.
type fuseCounts struct {
	open, read, flush, release atomic.Int64
}

func (c *fuseCounts) String() string {
	return fmt.Sprintf("OPEN %d, READ %d, FLUSH %d, RELEASE %d", c.open.Load(), c.read.Load(), c.flush.Load(), c.release.Load())
}

// countingFS is a RawFileSystem that counts the file requests it passes on.
type countingFS struct {
	fuse.RawFileSystem
	c *fuseCounts
}

func (f countingFS) Open(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	f.c.open.Add(1)
	return f.RawFileSystem.Open(cancel, in, out)
}

func (f countingFS) Read(cancel <-chan struct{}, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	f.c.read.Add(1)
	return f.RawFileSystem.Read(cancel, in, buf)
}

func (f countingFS) Flush(cancel <-chan struct{}, in *fuse.FlushIn) fuse.Status {
	f.c.flush.Add(1)
	return f.RawFileSystem.Flush(cancel, in)
}

func (f countingFS) Release(cancel <-chan struct{}, in *fuse.ReleaseIn) {
	f.c.release.Add(1)
	f.RawFileSystem.Release(cancel, in)
}

// fanoFile is a read-only file of the test FUSE filesystem. In no-open
// mode its Open and Flush answer ENOSYS (the kernel then stops sending
// them on the connection); otherwise they succeed (KEEP_CACHE, no handle).
type fanoFile struct {
	gofs.Inode
	data   []byte
	noOpen bool
}

var (
	_ gofs.NodeOpener    = (*fanoFile)(nil)
	_ gofs.NodeReader    = (*fanoFile)(nil)
	_ gofs.NodeFlusher   = (*fanoFile)(nil)
	_ gofs.NodeGetattrer = (*fanoFile)(nil)
)

func (f *fanoFile) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	if f.noOpen {
		return nil, 0, syscall.ENOSYS
	}
	return nil, fuse.FOPEN_KEEP_CACHE, 0
}

func (f *fanoFile) Read(ctx context.Context, fh gofs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if off >= int64(len(f.data)) {
		return fuse.ReadResultData(nil), 0
	}
	return fuse.ReadResultData(f.data[off:min(int64(len(f.data)), off+int64(len(dest)))]), 0
}

func (f *fanoFile) Flush(ctx context.Context, fh gofs.FileHandle) syscall.Errno {
	if f.noOpen {
		return syscall.ENOSYS
	}
	return 0
}

func (f *fanoFile) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	out.Mode = syscall.S_IFREG | 0o444
	out.Size = uint64(len(f.data))
	out.Nlink = 1
	return 0
}

// fanoRoot is the root of the test FUSE filesystem: a.txt and b.txt.
type fanoRoot struct {
	gofs.Inode
	noOpen bool
}

func (r *fanoRoot) OnAdd(ctx context.Context) {
	for name, data := range map[string]string{"a.txt": "alpha\n", "b.txt": "bravo\n"} {
		ch := r.NewPersistentInode(ctx, &fanoFile{data: []byte(data), noOpen: r.noOpen}, gofs.StableAttr{Mode: syscall.S_IFREG})
		r.AddChild(name, ch, false)
	}
}

// mountFanoFS mounts the test filesystem read-only on a new directory,
// with a watchdog that aborts the connection if the test hangs; it is
// unmounted at cleanup.
func mountFanoFS(t *testing.T, noOpen bool) (string, *fuseCounts) {
	t.Helper()
	canMount(t)
	mnt := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	counts := &fuseCounts{}
	opts := &gofs.Options{
		MountOptions: fuse.MountOptions{DirectMountStrict: true, Options: []string{"ro"}, FsName: "fanotest", Name: "fanotest"},
	}
	raw := countingFS{gofs.NewNodeFS(&fanoRoot{noOpen: noOpen}, opts), counts}
	srv, err := fuse.NewServer(raw, mnt, &opts.MountOptions)
	if err != nil {
		t.Fatalf("mount: %v", err)
	}
	go srv.Serve()
	if err := srv.WaitMount(); err != nil {
		_ = srv.Unmount()
		t.Fatalf("mount: %v", err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(mnt, &st); err != nil {
		t.Fatal(err)
	}
	dev := st.Dev
	var finished atomic.Bool
	timer := time.AfterFunc(60*time.Second, func() {
		if finished.Load() {
			return
		}
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		t.Errorf("watchdog: test still running after 60 s; aborting the FUSE connection; goroutines:\n%s", buf)
		abortConn(t, dev)
	})
	t.Cleanup(func() {
		finished.Store(true)
		timer.Stop()
		done := make(chan error, 1)
		go func() { done <- srv.Unmount() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("unmount: %v", err)
				_ = syscall.Unmount(mnt, syscall.MNT_DETACH)
			}
		case <-time.After(15 * time.Second):
			t.Errorf("unmount hangs; aborting the connection")
			abortConn(t, dev)
			_ = syscall.Unmount(mnt, syscall.MNT_DETACH)
		}
		waited := make(chan struct{})
		go func() { srv.Wait(); close(waited) }()
		select {
		case <-waited:
		case <-time.After(10 * time.Second):
			t.Errorf("server still running 10 s after unmount")
			abortConn(t, dev)
		}
	})
	return mnt, counts
}

// TestFanotifyFUSE: on a FUSE mount served by this process, the watcher
// reports the opens of cat (twice the same file: two events) without
// deadlocking against the server its event descriptors talk to, with
// the default GOMAXPROCS and with 1. In no-open mode the second cat is
// served from the page cache (no READ) and the watcher's descriptors
// send no OPEN; in open mode they do (OPEN, FLUSH and RELEASE each).
func TestFanotifyFUSE(t *testing.T) {
	needRoot(t)
	need(t, "cat")
	for _, procs := range []int{0, 1} {
		for _, noOpen := range []bool{true, false} {
			name := fmt.Sprintf("noOpen=%v/GOMAXPROCS=%d", noOpen, procs)
			if procs == 0 {
				name = fmt.Sprintf("noOpen=%v/GOMAXPROCS=default", noOpen)
			}
			t.Run(name, func(t *testing.T) {
				if procs > 0 {
					defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				}
				for _, fixed := range []bool{false, true} {
					t.Run(fmt.Sprintf("FixedNames=%v", fixed), func(t *testing.T) {
						testFanotifyFUSE(t, noOpen, fixed)
					})
				}
			})
		}
	}
}

func testFanotifyFUSE(t *testing.T, noOpen, fixedNames bool) {
	mnt, counts := mountFanoFS(t, noOpen)
	w, rec := startWatch(t, mnt, Options{FixedNames: fixedNames})

	// Each fork waits until the watcher has reported (and so closed the
	// descriptor of) the previous open: a child forked while the
	// watcher holds an event descriptor inherits it until its execve
	// and sends one more FLUSH when close-on-exec closes it.
	a, b := filepath.Join(mnt, "a.txt"), filepath.Join(mnt, "b.txt")
	out1, pid1 := childOpen(t, "cat", a)
	rec.waitN(t, 1, 10*time.Second)
	after1 := *counts.snapshot()
	out2, pid2 := childOpen(t, "cat", a)
	rec.waitN(t, 2, 10*time.Second)
	after2 := *counts.snapshot()
	if out1 != "alpha\n" || out2 != "alpha\n" {
		t.Errorf("cat a.txt: %q then %q", out1, out2)
	}
	if after1.read == 0 {
		t.Errorf("first cat: no READ (%v)", counts)
	}
	if noOpen && after2.read != after1.read {
		t.Errorf("second cat in no-open mode: %d READs, want 0 (page cache)", after2.read-after1.read)
	}
	out3, pid3 := childOpen(t, "cat", b)
	rec.waitN(t, 3, 10*time.Second)
	// An open by this process (the daemon) is not reported, and must
	// not hang either.
	if got, err := os.ReadFile(b); err != nil || string(got) != "bravo\n" {
		t.Errorf("ReadFile b.txt: %q, %v", got, err)
	}
	// Open mode: each event descriptor is a real open of the FUSE file
	// (OPEN, then FLUSH and RELEASE at its close), the ReadFile's too
	// (the kernel made it before the watcher skipped the event). RELEASE
	// is asynchronous: wait for it.
	waitCounts := func(n int64) {
		t.Helper()
		if noOpen {
			return
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			c := counts.snapshot()
			if c.open == n && c.flush == n && c.release == n {
				return
			}
			if time.Now().After(deadline) || c.open > n || c.flush > n || c.release > n {
				t.Fatalf("open mode: %v, want %d of each", counts, n)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitCounts(2 * 4) // three cats and the ReadFile, each with its event fd
	// A sentinel from another process: anything the ReadFile caused
	// was reported before it.
	out4, pid4 := childOpen(t, "cat", b)
	if out3 != "bravo\n" || out4 != "bravo\n" {
		t.Errorf("cat b.txt: %q then %q", out3, out4)
	}
	got := rec.waitN(t, 4, 10*time.Second)
	want := []openEvent{{"/a.txt", pid1}, {"/a.txt", pid2}, {"/b.txt", pid3}, {"/b.txt", pid4}}
	if !slices.Equal(got, want) {
		t.Errorf("events:\n got %v\nwant %v", got, want)
	}
	waitCounts(2 * 5)
	t.Logf("%v", counts)
	// With FixedNames the second open of each file is found by its file
	// handle (name_to_handle_at of a FUSE file sends no request), without
	// a readlink; the daemon's own open is skipped before either.
	wantHits := int64(0)
	if fixedNames {
		wantHits = 2
	}
	if got := w.pathHits.Load(); got != wantHits {
		t.Errorf("paths found by file handle: %d, want %d", got, wantHits)
	}
	if c := counts.snapshot(); noOpen && (c.open != 1 || c.flush < 1 || c.flush > 2 || c.release != 0 || c.read != 2) {
		// The first OPEN got ENOSYS, so the kernel sent none after it,
		// neither for the cats nor for the watcher's descriptors; no
		// FLUSH after the first ENOSYS came back (the first cat's close
		// and the close of its event descriptor may both be in flight
		// before it: 1 or 2); no RELEASE without OPEN; one READ per
		// file, the rest came from the page cache.
		t.Errorf("no-open mode: %v; want OPEN 1, READ 2, FLUSH 1 or 2, RELEASE 0", counts)
	}
	if err := w.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// countsSnapshot is a copy of fuseCounts' values.
type countsSnapshot struct{ open, read, flush, release int64 }

func (c *fuseCounts) snapshot() *countsSnapshot {
	return &countsSnapshot{c.open.Load(), c.read.Load(), c.flush.Load(), c.release.Load()}
}
