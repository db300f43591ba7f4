package fleet

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	mfmfs "github.com/mfm-project/mfm/fs"
)

// mountAgents mounts n's store for real with its agents/ tree and returns
// the mount point.
func mountAgents(t *testing.T, n *Node) string {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		fleettestUnavailable(t, "no /dev/fuse")
	}
	mnt := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := mfmfs.Mount(ctx, n.cfg.Store, mnt, mfmfs.Options{
		NoAccessLog: true,
		Logger:      slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil)),
		Hooks:       mfmfs.Hooks{Trees: map[string]mfmfs.VirtualTree{TreeName: n.Tree()}},
	})
	if err != nil {
		cancel()
		fleettestUnavailable(t, "mount: "+err.Error())
	}
	t.Cleanup(func() { srv.Unmount(); cancel() })
	return mnt
}

// TestStatDoesNotFetch: on a cold cache, ls -l of another agent's
// episode directory and stat of its frames report their sizes from the
// shipped file list without fetching them (the cache stays empty); a read
// then returns the bytes, of that size.
func TestStatDoesNotFetch(t *testing.T) {
	tm := newTeam(t)
	alice, bob := tm.agent("alice", false), tm.agent("bob", false)
	alice.record(t, 2)
	waitFor(t, 20*time.Second, "bob to see alice's episodes", func() bool { return bob.node.cat.count("alice", 1) == 2 })
	mnt := mountAgents(t, bob.node)

	obs := filepath.Join(mnt, "agents", "alice", "episodes", "ep_000001", "observation")
	out, err := exec.Command("ls", "-lR", filepath.Join(mnt, "agents", "alice", "episodes")).CombinedOutput()
	if err != nil {
		t.Fatalf("ls -lR: %v\n%s", err, out)
	}
	frame := readLocal(t, alice.store, "episodes/ep_000001/observation/image.png")
	if !strings.Contains(string(out), " "+strconv.Itoa(len(frame))+" ") {
		t.Errorf("ls -lR does not show the frame's size %d:\n%s", len(frame), out)
	}
	st, err := os.Stat(filepath.Join(obs, "image.png"))
	if err != nil || st.Size() != int64(len(frame)) {
		t.Fatalf("stat of alice's frame: %v, %v; want %d bytes", st, err, len(frame))
	}
	if got := bob.node.tree.cache.bytes(); got != 0 {
		t.Fatalf("ls -lR and stat fetched %d bytes into the cache, want none", got)
	}
	b, err := os.ReadFile(filepath.Join(obs, "image.png"))
	if err != nil || !bytes.Equal(b, frame) {
		t.Fatalf("read of alice's frame: %d bytes, %v; want alice's %d", len(b), err, len(frame))
	}
	if got := bob.node.tree.cache.bytes(); got != int64(len(frame)) {
		t.Errorf("after the read the cache holds %d bytes, want the frame's %d", got, len(frame))
	}
}
