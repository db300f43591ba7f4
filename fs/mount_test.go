package fs

// The test harness of this package: every test that needs a mount gets one
// from mountCopy/mountStore, which
//   - copies the store into t.TempDir() (testdata is never written),
//   - fails the test from the mount's PanicHandler,
//   - unmounts in t.Cleanup (retry, then lazy detach, then abort the FUSE
//     connection) before t.TempDir's own cleanup removes the directory,
//   - arms a per-test watchdog: if the test is not done in time, it dumps
//     every goroutine, aborts the FUSE connection (every blocked syscall on
//     the mount then fails with ENOTCONN instead of hanging) and fails.
//
// Rules that keep tests from deadlocking the in-process daemon (see
// docs/MOUNT.md, "Testing"):
//   - Child processes never get a Dir, a binary or an inherited fd on the
//     mount: os/exec forks with vfork, and a child that blocks on the mount
//     before execve keeps the parent thread, and its P, suspended. Tools
//     cd into the mount themselves (sh -c 'cd MNT && …').
//   - Every exec has a context timeout and WaitDelay.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"log"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mfm-project/mfm/episodes"
)

// fixtureStore is the recorded paper run (read only: copy it first).
const fixtureStore = "../testdata/paper-run/store"

// testWatchdog is the default per-test time limit of a mounted test.
const testWatchdog = 60 * time.Second

func TestMain(m *testing.M) {
	if spec := os.Getenv("MFM_FS_TEST_DAEMON"); spec != "" {
		os.Exit(daemonMain(spec))
	}
	if os.Geteuid() != 0 {
		if _, err := os.Stat("/dev/fuse"); err != nil {
			fmt.Fprintln(os.Stderr, "fs tests: /dev/fuse missing; mount tests will skip")
		}
	}
	os.Exit(m.Run())
}

// daemonMain is the test binary re-executed as a mount daemon
// (MFM_FS_TEST_DAEMON=store\nmountpoint): it mounts, prints "ready" and
// serves until killed or unmounted.
func daemonMain(spec string) int {
	store, mnt, _ := strings.Cut(spec, "\n")
	s, err := episodes.Open(store)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	srv, err := Mount(context.Background(), s, mnt, Options{NoAccessLog: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 4
	}
	fmt.Println("ready")
	srv.Wait()
	return 0
}

// canMount skips t unless this process can mount FUSE filesystems; under
// CI=true (set by .ci/run, which runs as root with /dev/fuse) it fails
// instead, so the mount tests can never silently test nothing there.
func canMount(t testing.TB) {
	t.Helper()
	why := ""
	if _, err := os.Stat("/dev/fuse"); err != nil {
		why = "no /dev/fuse"
	} else if os.Geteuid() != 0 {
		// Without root go-fuse mounts only through fusermount3, which
		// opens /dev/fuse as the calling user.
		if _, err := exec.LookPath("fusermount3"); err != nil {
			why = "not root and no fusermount3 in PATH (package fuse3): without root, go-fuse mounts only through it"
		} else if f, err := os.OpenFile("/dev/fuse", os.O_RDWR, 0); err != nil {
			why = fmt.Sprintf("not root and this user cannot open /dev/fuse, which fusermount3 opens as the caller: %v", err)
		} else {
			f.Close()
		}
	}
	if why == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI: the mount tests must run: %s", why)
	}
	t.Skip(why)
}

// copyTree copies the regular files, directories and symlinks of src to dst.
func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d iofs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case d.Type()&iofs.ModeSymlink != 0:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(l, to)
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fi, _ := d.Info()
			return os.WriteFile(to, b, fi.Mode().Perm())
		}
		return nil
	})
	if err != nil {
		t.Fatalf("copy %s to %s: %v", src, dst, err)
	}
}

// copyFixture copies the paper run's store into a fresh temporary
// directory and returns its path.
func copyFixture(t testing.TB) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "store")
	copyTree(t, fixtureStore, dst)
	return dst
}

// tmount is one mounted test store.
type tmount struct {
	t     testing.TB
	store *episodes.Store
	mnt   string
	srv   *Server
	dev   uint64 // st_dev of the mount (FUSE connection id = minor)

	unmountOnce sync.Once
	logBuf      *syncBuffer
}

// mountCopy mounts a fresh copy of the paper run's store.
func mountCopy(t testing.TB, opt Options) *tmount {
	t.Helper()
	return mountStore(t, copyFixture(t), opt)
}

// mountStore mounts the store at dir (which the test owns) on a new
// directory under t.TempDir().
func mountStore(t testing.TB, dir string, opt Options) *tmount {
	t.Helper()
	return mountStoreFor(t, dir, opt, testWatchdog)
}

// mountStoreFor is mountStore with a watchdog of d instead of testWatchdog.
func mountStoreFor(t testing.TB, dir string, opt Options, d time.Duration) *tmount {
	t.Helper()
	canMount(t)
	s, err := episodes.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	mnt := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	tm := &tmount{t: t, store: s, mnt: mnt, logBuf: &syncBuffer{}}
	if os.Getenv("MFM_FS_PER_OPEN") != "" {
		opt.PerOpen = true // TestPerOpenMode's child
	}
	if opt.Logger == nil {
		level := slog.LevelInfo
		if testing.Verbose() && os.Getenv("MFM_FS_DEBUG") != "" {
			level = slog.LevelDebug
			opt.Debug = true
		}
		opt.Logger = slog.New(slog.NewTextHandler(tm.logBuf, &slog.HandlerOptions{Level: level}))
	}
	userPanic := opt.PanicHandler
	opt.PanicHandler = func(p any) {
		t.Errorf("FUSE handler panic: %v", p)
		if userPanic != nil {
			userPanic(p)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	srv, err := Mount(ctx, s, mnt, opt)
	if err != nil {
		t.Fatalf("mount: %v", err)
	}
	tm.srv = srv
	var st syscall.Stat_t
	if err := syscall.Stat(mnt, &st); err != nil {
		_ = srv.Unmount()
		t.Fatalf("stat mount: %v", err)
	}
	tm.dev = st.Dev
	t.Cleanup(func() {
		tm.unmount()
		if t.Failed() && tm.logBuf.Len() > 0 {
			t.Logf("daemon log:\n%s", tm.logBuf.String())
		}
	})
	watch(t, d, tm)
	return tm
}

// path joins elem onto the mount point.
func (tm *tmount) path(elem ...string) string {
	return filepath.Join(append([]string{tm.mnt}, elem...)...)
}

// unmount unmounts (idempotent) and waits for the server to stop, with
// escalation: Unmount (retries, lazy detach), then an aborted connection.
// It fails the test if the mount cannot be cleared in time.
func (tm *tmount) unmount() {
	tm.unmountOnce.Do(func() {
		t := tm.t
		done := make(chan error, 1)
		go func() { done <- tm.srv.Unmount() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("unmount: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Errorf("unmount: no answer in 15 s; aborting the FUSE connection")
			abortConn(t, tm.dev)
			_ = syscall.Unmount(tm.mnt, syscall.MNT_DETACH)
		}
		waited := make(chan struct{})
		go func() { tm.srv.Wait(); close(waited) }()
		select {
		case <-waited:
		case <-time.After(10 * time.Second):
			t.Errorf("server still running 10 s after unmount (an open file on a lazily detached mount?); aborting the connection")
			abortConn(t, tm.dev)
			select {
			case <-waited:
			case <-time.After(5 * time.Second):
				t.Errorf("server did not stop after abort")
			}
		}
		if isMounted(tm.mnt) {
			t.Errorf("%s is still mounted after unmount; detaching", tm.mnt)
			_ = syscall.Unmount(tm.mnt, syscall.MNT_DETACH)
		}
	})
}

// captureRequests sends the request log of the mounts made with
// Options.Debug to the returned buffer until the test ends.
func captureRequests(t testing.TB) *syncBuffer {
	buf := &syncBuffer{}
	debugLogger = log.New(buf, "", 0)
	t.Cleanup(func() { debugLogger = nil })
	return buf
}

// nodeNames maps node ids to names from the LOOKUP requests and answers
// of a go-fuse request log (`rx 52: LOOKUP n1 "README.md"`, then
// `tx 52: OK, {n2 g0 …`).
func nodeNames(log string) map[string]string {
	rxLookup := regexp.MustCompile(`^rx (\d+): LOOKUP n\d+\s+"([^"]+)"`)
	txNode := regexp.MustCompile(`^tx (\d+):\s+OK, \{n(\d+) `)
	lookups := map[string]string{}
	names := map[string]string{}
	for _, l := range strings.Split(log, "\n") {
		if m := rxLookup.FindStringSubmatch(l); m != nil {
			lookups[m[1]] = m[2]
		} else if m := txNode.FindStringSubmatch(l); m != nil && lookups[m[1]] != "" {
			names[m[2]] = lookups[m[1]]
		}
	}
	return names
}

// isMounted reports whether mnt is a mount point, from /proc/self/mountinfo
// (no syscall on the mount itself, which could hang).
func isMounted(mnt string) bool {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[4] == mnt {
			return true
		}
	}
	return false
}

// abortConn aborts the FUSE connection of the mount with device dev
// through fusectl (mounting it if needed): every request waiting for the
// daemon fails with ENOTCONN, so nothing stays blocked.
func abortConn(t testing.TB, dev uint64) {
	const ctl = "/sys/fs/fuse/connections"
	minor := (dev & 0xff) | ((dev >> 12) & 0xfff00)
	p := filepath.Join(ctl, strconv.FormatUint(minor, 10), "abort")
	if _, err := os.Stat(p); err != nil {
		_ = syscall.Mount("fusectl", ctl, "fusectl", 0, "")
	}
	if err := os.WriteFile(p, []byte("1"), 0o200); err != nil {
		t.Logf("abort FUSE connection %d: %v", minor, err)
	}
}

// watch arms a watchdog for t: after d it logs every goroutine's stack,
// aborts the mount's FUSE connection and fails the test, so a hang
// becomes a failure with a diagnosis instead of a killed test binary.
func watch(t testing.TB, d time.Duration, tm *tmount) {
	var mu sync.Mutex
	done := false
	timer := time.AfterFunc(d, func() {
		mu.Lock()
		defer mu.Unlock()
		if done {
			return
		}
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		t.Errorf("watchdog: test still running after %v; goroutines:\n%s", d, buf)
		if tm != nil {
			abortConn(t, tm.dev)
			_ = syscall.Unmount(tm.mnt, syscall.MNT_DETACH)
		}
	})
	t.Cleanup(func() {
		mu.Lock()
		done = true
		mu.Unlock()
		timer.Stop()
	})
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }
func (s *syncBuffer) Len() int       { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Len() }

// toolTimeout bounds every external command of a test.
const toolTimeout = 20 * time.Second

// command returns a command with a timeout; its Dir is a directory
// outside the mount (see the rules at the top of this file).
func command(ctx context.Context, name string, args ...string) *exec.Cmd {
	c := exec.CommandContext(ctx, name, args...)
	c.Dir = os.TempDir()
	c.WaitDelay = 2 * time.Second
	c.Env = append(os.Environ(), "LC_ALL=C")
	return c
}

// run runs a command to completion and returns its stdout; stderr and
// the exit status are in err.
func run(t testing.TB, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	defer cancel()
	c := command(ctx, name, args...)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	if ctx.Err() != nil {
		return out.String(), fmt.Errorf("%s %s: timed out after %v", name, strings.Join(args, " "), toolTimeout)
	}
	if err != nil {
		return out.String(), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// mustRun is run that fails the test on error.
func mustRun(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := run(t, name, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sh runs a shell script (it may cd into the mount itself).
func sh(t testing.TB, script string) (string, error) {
	t.Helper()
	return run(t, "sh", "-ec", script)
}

func mustSh(t testing.TB, script string) string {
	t.Helper()
	out, err := sh(t, script)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// need skips t if a tool is missing.
func need(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
}

// lineWaiter reads lines from r in the background; wait returns once a
// line containing want arrived, or fails after a timeout.
type lineWaiter struct {
	mu    sync.Mutex
	lines []string
	cond  chan struct{}
	err   error
}

func newLineWaiter(r io.Reader) *lineWaiter {
	w := &lineWaiter{cond: make(chan struct{}, 1)}
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			w.mu.Lock()
			w.lines = append(w.lines, sc.Text())
			w.mu.Unlock()
			select {
			case w.cond <- struct{}{}:
			default:
			}
		}
		w.mu.Lock()
		w.err = sc.Err()
		if w.err == nil {
			w.err = io.EOF
		}
		w.mu.Unlock()
		close(w.cond)
	}()
	return w
}

func (w *lineWaiter) has(want string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, l := range w.lines {
		if strings.Contains(l, want) {
			return true
		}
	}
	return false
}

func (w *lineWaiter) wait(t testing.TB, want string, d time.Duration) {
	t.Helper()
	deadline := time.After(d)
	for !w.has(want) {
		select {
		case _, ok := <-w.cond:
			if !ok && !w.has(want) {
				t.Fatalf("stream ended (%v) before a line with %q", w.err, want)
			}
		case <-deadline:
			t.Fatalf("no line with %q within %v", want, d)
		}
	}
}

// errnoOfErr extracts a syscall.Errno from err (0 for nil).
func errnoOfErr(err error) syscall.Errno {
	var en syscall.Errno
	if errors.As(err, &en) {
		return en
	}
	if err == nil {
		return 0
	}
	return syscall.Errno(^uintptr(0))
}

// TestMountSmoke mounts the paper run and reads the root.
func TestMountSmoke(t *testing.T) {
	tm := mountCopy(t, Options{})
	out := mustRun(t, "ls", tm.mnt)
	for _, want := range []string{"README.md", "episodes", "index.jsonl", "grid.jsonl", "logs.txt", "mine", "now", "previous"} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("ls /: no %s in\n%s", want, out)
		}
	}
}

func contextTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}
