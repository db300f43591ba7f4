package fleet

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mfmfs "github.com/mfm-project/mfm/fs"
)

// TestMountShowsOtherAgents mounts bob's store for real with the agents/
// tree and the shared querier, and drives ls, cat and jq over alice's
// episodes; alice's next episode appears in bob's mount while mounted.
func TestMountShowsOtherAgents(t *testing.T) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		fleettestUnavailable(t, "no /dev/fuse")
	}
	if _, err := exec.LookPath("jq"); err != nil {
		fleettestUnavailable(t, "jq not installed")
	}
	tm := newTeam(t)
	alice, bob := tm.agent("alice", false), tm.agent("bob", false)
	alice.record(t, 2, "stuck")
	waitFor(t, 20*time.Second, "bob to see alice's episodes", func() bool { return bob.node.cat.count("alice", 1) == 2 })

	mnt := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := mfmfs.Mount(ctx, bob.store, mnt, mfmfs.Options{
		NoAccessLog: true,
		Logger:      slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil)),
		Hooks: mfmfs.Hooks{
			Trees:   map[string]mfmfs.VirtualTree{TreeName: bob.node.Tree()},
			Querier: bob.node.Querier(localStub{}),
		},
	})
	if err != nil {
		fleettestUnavailable(t, "mount: "+err.Error())
	}
	defer srv.Unmount()

	run := func(name string, args ...string) string {
		t.Helper()
		cctx, ccancel := context.WithTimeout(ctx, 20*time.Second)
		defer ccancel()
		out, err := exec.CommandContext(cctx, name, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return string(out)
	}
	if got := run("ls", filepath.Join(mnt, "agents")); got != "alice\n" {
		t.Errorf("ls agents = %q", got)
	}
	if got := run("ls", filepath.Join(mnt, "agents", "alice")); got != "episodes\ngrid.jsonl\nindex.jsonl\n" {
		t.Errorf("ls agents/alice = %q", got)
	}
	if got := run("jq", "-r", ".id", filepath.Join(mnt, "agents", "alice", "index.jsonl")); got != "ep_000000\nep_000001\n" {
		t.Errorf("jq .id agents/alice/index.jsonl = %q", got)
	}
	// index.jsonl and grid.jsonl are served from this mount's local copies,
	// byte for byte as in alice's store.
	for _, f := range []string{"index.jsonl", "grid.jsonl"} {
		// sized before any read as what a read gives
		if got := run("stat", "-c", "%s", filepath.Join(mnt, "agents", "alice", f)); got != fmt.Sprintf("%d\n", len(readLocal(t, alice.store, f))) {
			t.Errorf("stat agents/alice/%s before reading it: %q bytes, want alice's %d", f, got, len(readLocal(t, alice.store, f)))
		}
		if got := run("cat", filepath.Join(mnt, "agents", "alice", f)); got != string(readLocal(t, alice.store, f)) {
			t.Errorf("cat agents/alice/%s: %q, want alice's %q", f, got, readLocal(t, alice.store, f))
		}
	}
	frame := run("cat", filepath.Join(mnt, "agents", "alice", "episodes", "ep_000001", "observation", "image.png"))
	if frame != string(readLocal(t, alice.store, "episodes/ep_000001/observation/image.png")) {
		t.Errorf("cat of alice's frame through bob's mount: %d bytes, not alice's", len(frame))
	}
	q := filepath.Join(mnt, "q", "agent:alice tag:stuck")
	if got := run("ls", q); !strings.Contains(got, "agents.alice.ep_000000\nagents.alice.ep_000001\n") {
		t.Errorf("ls q/agent:alice tag:stuck = %q", got)
	}
	if got := run("cat", filepath.Join(q, "agents.alice.ep_000001", "action.json")); !strings.Contains(got, "dig_down") {
		t.Errorf("action.json through the query's link = %q", got)
	}
	// The query's rows say whose they are and where they are in this mount.
	if got := run("jq", "-r", `.agent + " " + .episode_dir + " " + .id`, filepath.Join(q, "results.jsonl")); got != "alice agents/alice/episodes/ep_000000 ep_000000\nalice agents/alice/episodes/ep_000001 ep_000001\n" {
		t.Errorf("agent, episode_dir and id of the query's rows = %q", got)
	}
	// README.md documents agents/ with who is there right now, and its
	// example commands work.
	readme := run("cat", filepath.Join(mnt, "README.md"))
	i, j := strings.Index(readme, "## Other agents (`agents/`)"), strings.Index(readme, "## Writing")
	if i < 0 || j < i || !strings.Contains(readme[i:j], "- `alice`: 2 episodes in its life 1") || !strings.Contains(readme[i:j], "you are `bob`") {
		t.Fatalf("README.md's agents/ section missing, misplaced or wrong:\n%s", readme)
	}
	for _, line := range strings.Split(readme[i:j], "\n") {
		if strings.HasPrefix(line, "cat "+mnt+"/agents/") || strings.HasPrefix(line, "ls '"+mnt+"/q/agent:") {
			run("sh", "-c", line)
		}
	}
	if err := os.WriteFile(filepath.Join(mnt, "agents", "alice", "index.jsonl"), []byte("x"), 0o644); err == nil {
		t.Errorf("wrote to another agent's index.jsonl")
	}
	if err := os.Mkdir(filepath.Join(mnt, "agents", "alice", "mine"), 0o755); err == nil {
		t.Errorf("created a directory under agents/alice")
	}
	alice.record(t, 1, "damage")
	waitFor(t, 20*time.Second, "alice's new episode in bob's mount", func() bool {
		_, err := os.Stat(filepath.Join(mnt, "agents", "alice", "episodes", "ep_000002", "outcome.json"))
		return err == nil
	})
	if got := run("ls", filepath.Join(mnt, "q", "agent:alice tag:damage")); !strings.Contains(got, "agents.alice.ep_000002") {
		t.Errorf("ls q/agent:alice tag:damage = %q", got)
	}
}

func fleettestUnavailable(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s (CI=true makes this a failure)", why)
	}
	t.Skip(why)
}
