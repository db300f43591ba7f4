package fs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/internal/fanotify"
)

// failedMountWait is how long a failed Mount may take to return.
const failedMountWait = 15 * time.Second

// goroutinesIn counts the goroutines whose stack holds fn.
func goroutinesIn(fn string) int {
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, fn) {
			n++
		}
	}
	return n
}

// accessWriter and fuseLoop are the goroutines a failed mount must not
// leave behind: the access log's writer and a FUSE server's request loop.
const (
	accessWriter = "fs/content.(*AccessLog).run"
	fuseLoop     = "go-fuse/v2/fuse.(*Server).loop"
)

// hungMount mounts at mnt a FUSE filesystem whose server never serves:
// every request on it (stat, statfs) waits until the connection is
// aborted, which the test's cleanup does.
func hungMount(t *testing.T, mnt string) {
	t.Helper()
	opts := &gofs.Options{}
	opts.DirectMountStrict = os.Geteuid() == 0
	srv, err := fuse.NewServer(gofs.NewNodeFS(&gofs.Inode{}, opts), mnt, &opts.MountOptions)
	if err != nil {
		t.Fatalf("hung mount: %v", err)
	}
	// NewServer has answered INIT; without Serve nothing else is read.
	// Serving at the end answers what waits, and lets the mount be
	// unmounted (by fusermount3 without root).
	t.Cleanup(func() {
		go srv.Serve()
		if err := srv.Unmount(); err != nil {
			t.Errorf("unmount the hung mount: %v", err)
		}
	})
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestFailedMount: a Mount that fails returns its error promptly and
// leaves nothing behind — no mount, no access-log writer, no FUSE
// request loop: on a file, a missing directory, a live mount, a FUSE
// mount whose daemon hangs, when the access log's fanotify watcher is
// refused after the store's mount was made, and (without root) when
// fusermount3 fails.
func TestFailedMount(t *testing.T) {
	canMount(t)
	defer func(d time.Duration) { mountpointWait = d }(mountpointWait)
	mountpointWait = time.Second // the hung mount point
	root := os.Geteuid() == 0
	cached := root && os.Getenv("MFM_FS_PER_OPEN") == ""
	for _, c := range []struct {
		name  string
		skip  string
		setup func(t *testing.T, mnt string) string // the mount point to use
		want  string
	}{
		{name: "file", setup: func(t *testing.T, mnt string) string {
			if err := os.WriteFile(mnt, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			return mnt
		}, want: "not a directory"},
		{name: "missing", setup: func(t *testing.T, mnt string) string { return mnt }, want: "no such file"},
		{name: "mounted", setup: func(t *testing.T, mnt string) string {
			return mountCopy(t, Options{NoAccessLog: true}).mnt
		}, want: "already mounted"},
		{name: "hung", setup: func(t *testing.T, mnt string) string {
			mkdir(t, mnt)
			hungMount(t, mnt)
			return mnt
		}, want: "does not answer"},
		{name: "fanotify", skip: map[bool]string{false: "episodes/ is not a mount of its own (per-open mode)"}[cached], setup: func(t *testing.T, mnt string) string {
			mkdir(t, mnt)
			old := watchOpens
			watchOpens = func(string, fanotify.Options, func(string, int32)) (*fanotify.Watch, error) {
				return nil, errors.New("fanotify_init: operation not permitted")
			}
			t.Cleanup(func() { watchOpens = old })
			return mnt
		}, want: "access log: fanotify_init: operation not permitted"},
		{name: "fusermount", skip: map[bool]string{true: "root mounts without fusermount3"}[root], setup: func(t *testing.T, mnt string) string {
			mkdir(t, mnt)
			bin := t.TempDir()
			script := "#!/bin/sh\necho 'fusermount3: failed to open /dev/fuse: Permission denied' >&2\nexit 1\n"
			if err := os.WriteFile(filepath.Join(bin, "fusermount3"), []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
			return mnt
		}, want: "fusermount"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.skip != "" {
				t.Skip(c.skip)
			}
			watch(t, 2*failedMountWait, nil)
			store, err := episodes.Open(copyFixture(t))
			if err != nil {
				t.Fatal(err)
			}
			mnt := c.setup(t, filepath.Join(t.TempDir(), "mnt"))
			writers, loops := goroutinesIn(accessWriter), goroutinesIn(fuseLoop)
			type result struct {
				srv *Server
				err error
			}
			done := make(chan result, 1)
			go func() {
				srv, err := Mount(context.Background(), store, mnt, Options{})
				done <- result{srv, err}
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(failedMountWait):
				t.Fatalf("Mount has not returned after %v", failedMountWait)
			}
			if r.err == nil {
				r.srv.Unmount()
				r.srv.Wait()
				t.Fatalf("Mount succeeded")
			}
			if !strings.Contains(r.err.Error(), c.want) {
				t.Errorf("Mount: %v, want an error with %q", r.err, c.want)
			}
			// What was mounted before stays; nothing new is left mounted.
			if c.name != "mounted" && c.name != "hung" && isMounted(mnt) {
				t.Errorf("%s is still mounted after the failed Mount", mnt)
			}
			for _, p := range []string{filepath.Join(mnt, episodes.EpisodesDir), filepath.Join(mnt, episodes.PreviousDir)} {
				if c.name != "mounted" && isMounted(p) {
					t.Errorf("%s is still mounted after the failed Mount", p)
				}
			}
			// Both are stopped before Mount returns.
			if n := goroutinesIn(accessWriter); n > writers {
				t.Errorf("%d access-log writers left running (%d before)", n, writers)
			}
			// (The live mount of "mounted" may start request loops of
			// its own meanwhile: go-fuse adds readers as requests come.)
			if n := goroutinesIn(fuseLoop); n > loops && c.name != "mounted" {
				t.Errorf("%d FUSE request loops left running (%d before)", n, loops)
			}
		})
	}
}
