package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mfm-project/mfm/episodes"
)

// TestMountQueries mounts a store with the hooks mfmd mount uses while
// another holder has its cue index (queries are answered by a scan),
// waits for the mount to take the index when it is free, and reads q/
// through the kernel: hand-counted answers, and a row appended while
// mounted is in the very next lookup.
func TestMountQueries(t *testing.T) {
	canMountView(t)
	dir := t.TempDir()
	store, err := episodes.Init(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	var rows strings.Builder
	for i := 0; i < 500; i++ {
		tags := `"walk"`
		if i%50 == 7 {
			tags = `"stuck"`
		}
		fmt.Fprintf(&rows, `{"id": "ep_%06d", "path": "episodes/ep_%06d", "image": "", "kind": "episode", "first_step": %d, "last_step": %d, "action_kind": "go_to", "summary": "go_to the tree %d", "tags": [%s], "x": %d.5, "y": 0.0, "z": 0.5, "gui_open": false}`+"\n", i, i, i*10, i*10+9, i, tags, i%40)
	}
	if err := os.WriteFile(store.Path("index.jsonl"), []byte(rows.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// Another holder has the index as the mount starts (as a running
	// mfmd q would): the mount answers by scanning, then takes the index
	// once it is free.
	lock := store.Path(".mfm", "cue.lock")
	os.MkdirAll(filepath.Dir(lock), 0o755)
	holder, err := episodes.TryLock(lock)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Unlock()
	mnt := mountForTest(t, store, filepath.Join(dir, "mnt"))

	read := func(q, file string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(mnt, "q", q, file))
		if err != nil {
			t.Fatalf("q/%s/%s: %v", q, file, err)
		}
		return string(b)
	}
	if got := read("tag:stuck", "count"); got != "10\n" { // answered by a scan
		t.Errorf("while the index is busy, q/tag:stuck/count = %q, want 10", got)
	}
	holder.Unlock() // empties the lock file; the mount's index writes its pid
	owner := "pid " + strconv.Itoa(os.Getpid()) + " "
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		if b, _ := os.ReadFile(lock); strings.HasPrefix(string(b), owner) {
			break // the mount's index holds the lock: it is open
		}
		if time.Since(start) > 30*time.Second {
			t.Fatal("the mount never opened its cue index")
		}
	}
	for _, c := range []struct{ q, count string }{
		{"tag:stuck", "10\n"},
		{"tag:stuck last:3", "3\n"},
		{"near:7,0 r:1", "26\n"}, // x = 6.5 or 7.5 (i%40 is 6 or 7: 13 rows each); z = 0.5
		{"tree 17", "1\n"},
		{"steps:100..119", "2\n"},
	} {
		if got := read(c.q, "count"); got != c.count {
			t.Errorf("q/%s/count = %q, want %q", c.q, got, c.count)
		}
	}
	if got := read("tag:stuck last:3", "results.jsonl"); strings.Count(got, "\n") != 3 || !strings.Contains(got, `"id": "ep_000457"`) || !strings.Contains(got, `"id": "ep_000357"`) {
		t.Errorf("tag:stuck last:3 rows:\n%s", got)
	}

	// A row appended while mounted is answered by the next lookup.
	f, _ := os.OpenFile(store.Path("index.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"id": "ep_000500", "path": "episodes/ep_000500", "image": "", "kind": "episode", "first_step": 5000, "last_step": 5001, "action_kind": "dig_down", "summary": "dug a needle shaft", "tags": ["stuck"], "x": 0.5, "y": -3.0, "z": 0.5, "gui_open": false}` + "\n")
	f.Close()
	if got := read("tag:stuck", "count"); got != "11\n" {
		t.Errorf("after an append, q/tag:stuck/count = %q, want 11", got)
	}
	if got := read("needle", "results.jsonl"); !strings.Contains(got, `"id": "ep_000500"`) {
		t.Errorf("q/needle: %q", got)
	}
}

// TestMountGOMAXPROCS1 re-runs the mount tests of this package in a child
// test binary with GOMAXPROCS=1: no call may hang the mount when the
// daemon's goroutines share one thread.
func TestMountGOMAXPROCS1(t *testing.T) {
	canMountView(t)
	if os.Getenv("GOMAXPROCS") == "1" {
		t.Skip("already GOMAXPROCS=1")
	}
	c := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^(TestMountQueries|TestMountViews|TestDemoTourCommands)$", "-test.count=1", "-test.timeout=120s", "-test.v")
	c.Env = append(os.Environ(), "GOMAXPROCS=1")
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("GOMAXPROCS=1: %v\n%s", err, out)
	}
	if n := strings.Count(string(out), "--- PASS"); n != 3 {
		t.Fatalf("GOMAXPROCS=1: %d tests passed, want 3\n%s", n, out)
	}
}
