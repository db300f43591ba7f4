package fleet

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mfm-project/mfm/fleet/fleettest"
)

// TestNotesCache: bob's mount shows alice's shared note; bob's reads of
// agents/ and agents/alice/mine/ ask the database nothing while the note
// is unchanged; alice's edit reaches bob through a notification on
// mfm_notes (a handful of queries, not one per read); with PostgreSQL
// stopped bob still reads the note as held; when it is back, edits and
// removals arrive again.
func TestNotesCache(t *testing.T) {
	pg, url := ownPostgres(t)
	tm := &team{t: t, pg: url, s3: fleettest.S3(t)}
	alice, bob := tm.agent("alice", true), tm.agent("bob", false)
	<-bob.node.Ready()
	if err := os.MkdirAll(alice.store.Path("mine"), 0o755); err != nil {
		t.Fatal(err)
	}
	note := alice.store.Path("mine", "notes.md")
	if err := os.WriteFile(note, []byte("v1: the shaft traps you\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mnt := mountAgents(t, bob.node)
	shown := filepath.Join(mnt, "agents", "alice", "mine", "notes.md")
	reads := 0
	read := func() string {
		reads++
		b, _ := os.ReadFile(shown)
		return string(b)
	}
	browse := func(want string) {
		t.Helper()
		ents, err := os.ReadDir(filepath.Join(mnt, "agents"))
		if err != nil || len(ents) != 1 || ents[0].Name() != "alice" {
			t.Fatalf("ls agents: %v, %v; want alice", ents, err)
		}
		ents, err = os.ReadDir(filepath.Join(mnt, "agents", "alice", "mine"))
		if err != nil || len(ents) != 1 || ents[0].Name() != "notes.md" {
			t.Fatalf("ls agents/alice/mine: %v, %v; want notes.md", ents, err)
		}
		if st, err := os.Stat(shown); err != nil || st.Size() != int64(len(want)) {
			t.Fatalf("stat agents/alice/mine/notes.md: %v, %v; want %d bytes", st, err, len(want))
		}
		if got := read(); got != want {
			t.Fatalf("agents/alice/mine/notes.md = %q, want %q", got, want)
		}
	}
	queries := func() int64 { return bob.node.tree.notes.queries.Load() }

	waitFor(t, 20*time.Second, "alice's note in bob's mount", func() bool { return read() == "v1: the shaft traps you\n" })
	browse("v1: the shaft traps you\n")
	q0 := queries()
	for range 20 {
		browse("v1: the shaft traps you\n")
	}
	if got := queries() - q0; got != 0 {
		t.Fatalf("20 rounds of ls, stat and cat of an unchanged note sent %d queries, want 0", got)
	}

	q0, reads = queries(), 0
	if err := os.WriteFile(note, []byte("v2: the shaft at ep_000001 traps you, dig around it\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "alice's edit in bob's mount", func() bool {
		return read() == "v2: the shaft at ep_000001 traps you, dig around it\n"
	})
	// After the notification: the agents, alice's notes and the body.
	if got := queries() - q0; got > 6 {
		t.Errorf("%d reads until alice's edit showed sent %d queries, want at most 6 (one reload)", reads, got)
	}
	t.Logf("%d reads until the edit showed, %d queries", reads, queries()-q0)

	if err := pg.Stop(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "bob's follower to notice", func() bool {
		n := bob.node.tree.notes
		n.mu.Lock()
		defer n.mu.Unlock()
		return !n.listening
	})
	for range 3 {
		browse("v2: the shaft at ep_000001 traps you, dig around it\n")
	}

	if err := pg.Start(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(note, []byte("v3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "alice's edit after the restart", func() bool { return read() == "v3\n" })
	if err := os.Remove(note); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "alice's removed note gone from bob's mount", func() bool {
		_, err := os.Stat(shown)
		return errors.Is(err, os.ErrNotExist)
	})
	if ents, err := os.ReadDir(filepath.Join(mnt, "agents")); err != nil || len(ents) != 0 {
		names := []string{}
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("ls agents after alice's last note went: %s, %v; want nothing", strings.Join(names, " "), err)
	}
}
