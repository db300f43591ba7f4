package fleet

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mfm-project/mfm/fleet/fleettest"
	"github.com/mfm-project/mfm/internal/lru"
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

	// An edit of the same size given the same mtime (two writes within one
	// tick of the file clock look so) is shipped too.
	before, err := os.Stat(note)
	if err != nil {
		t.Fatal(err)
	}
	v2b := "v2: the shaft at ep_000002 traps you, dig around it\n"
	if err := os.WriteFile(note, []byte(v2b), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(note, before.ModTime(), before.ModTime()); err != nil {
		t.Fatal(err)
	}
	if after, err := os.Stat(note); err != nil || after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) {
		t.Fatalf("the edit should keep size and mtime: %v, %v", after, err)
	}
	waitFor(t, 20*time.Second, "alice's same-size edit in bob's mount", func() bool { return read() == v2b })

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
		browse(v2b)
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

// TestNotesBodiesBounded: bob keeps at most the bodies' budget of
// alice's notes, the most recently read, and still reads each note whole
// and right (one query for a body that was dropped, none for one held).
func TestNotesBodiesBounded(t *testing.T) {
	tm := newTeam(t)
	alice, bob := tm.agent("alice", true), tm.agent("bob", false)
	<-bob.node.Ready()
	const budget, size, count = 256 << 10, 60 << 10, 8 // 4 notes fit
	cache := bob.node.tree.notes
	cache.bodies = lru.New(budget, func(b []byte) int64 { return int64(len(b)) })
	if err := os.MkdirAll(alice.store.Path("mine"), 0o755); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for i := range count {
		name := fmt.Sprintf("note%d.md", i)
		want[name] = strings.Repeat(string(rune('a'+i)), size-1) + "\n"
		if err := os.WriteFile(alice.store.Path("mine", name), []byte(want[name]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mnt := mountAgents(t, bob.node)
	dir := filepath.Join(mnt, "agents", "alice", "mine")
	waitFor(t, 20*time.Second, "alice's notes in bob's mount", func() bool {
		ents, _ := os.ReadDir(dir)
		return len(ents) == count
	})
	read := func(name string) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(b) != want[name] {
			t.Fatalf("agents/alice/mine/%s: %d bytes, %v; want %d bytes of %q", name, len(b), err, len(want[name]), want[name][:1])
		}
	}
	for range 2 {
		for i := range count {
			read(fmt.Sprintf("note%d.md", i))
		}
		if n, used, _, _ := cache.bodies.Stats(); used > budget || n != budget/size {
			t.Fatalf("%d bodies of %d bytes held, want %d within the budget %d", n, used, budget/size, budget)
		}
	}
	q0 := cache.queries.Load()
	read(fmt.Sprintf("note%d.md", count-1)) // the last read: held
	if got := cache.queries.Load() - q0; got != 0 {
		t.Errorf("reading the note read last sent %d queries, want 0", got)
	}
	read("note0.md") // dropped for the later ones
	if got := cache.queries.Load() - q0; got != 1 {
		t.Errorf("reading a dropped note sent %d queries, want 1", got)
	}
}
