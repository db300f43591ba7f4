package fanotify

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// toolTimeout bounds one child process of a test.
const toolTimeout = 20 * time.Second

// command returns a command with a timeout, run from a directory outside
// any test mount.
func command(ctx context.Context, name string, args ...string) *exec.Cmd {
	c := exec.CommandContext(ctx, name, args...)
	c.Dir = os.TempDir()
	c.WaitDelay = 2 * time.Second
	c.Env = append(os.Environ(), "LC_ALL=C")
	return c
}

// need skips t unless every tool is installed.
func need(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
}

// canMount skips t (fails it under CI=true) unless FUSE mounts work here.
func canMount(t testing.TB) {
	t.Helper()
	why := ""
	if _, err := os.Stat("/dev/fuse"); err != nil {
		why = "no /dev/fuse"
	} else if os.Geteuid() != 0 {
		if _, err := exec.LookPath("fusermount3"); err != nil {
			why = "not root and no fusermount3"
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
