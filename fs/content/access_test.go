package content

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mfm-project/mfm/episodes"
)

// FuzzAppendAccessRow: an access-log line is exactly the AccessRecord
// json.Marshal writes, whether appendAccessRow writes it directly (plain
// strings) or through json.Marshal (anything to escape), and decodes back
// to the record. The seeds run with every go test.
func FuzzAppendAccessRow(f *testing.F) {
	for _, s := range []struct {
		path, kind string
		pid        uint32
		nanos      int64
		turn       string
	}{
		{"/episodes/ep_000012/observation/image.png", "frame", 4242, 1764771000123456789, ""},
		{"/episodes/ep_000012/observation/image@crop=1,2,3,4@zoom=4.png", "view", 1, 1764771000000000000, "t0003"},
		{"/mine/notes & plans/<draft>.md", "note", 0, 0, "before t0004"},
		{"/mine/\"quoted\"\\back\tslash\n", "note-write", 7, -1, "after t0009"},
		{"/mine/é \u2028 \xff", "note", 9, 1, "t\"1\xff"},
		{"/q/tag:stuck last:5/results.jsonl", "query", 12, 999, ""},
	} {
		f.Add(s.path, s.kind, s.pid, s.nanos, s.turn)
	}
	f.Fuzz(func(t *testing.T, path, kind string, pid uint32, nanos int64, turn string) {
		e := accessEntry{at: time.Unix(0, nanos), path: path, kind: kind, pid: pid, turn: turn}
		want, err := json.Marshal(AccessRecord{Time: e.at.UTC().Format(time.RFC3339Nano), Path: path, Kind: kind, Pid: pid, Turn: turn})
		if err != nil {
			t.Fatal(err)
		}
		got := appendAccessRow([]byte("prev\n"), e)
		if string(got) != "prev\n"+string(want)+"\n" {
			t.Fatalf("appendAccessRow(%q, %q, %d, %d, %q):\n got %s\nwant %s", path, kind, pid, nanos, turn, got[5:], want)
		}
		var r AccessRecord
		if err := json.Unmarshal(got[5:], &r); err != nil {
			t.Fatalf("line %s does not decode: %v", got[5:], err)
		}
	})
}

// TestAccessLogTurn: with SetTurn, every row carries the turn current
// when it was added; the same path read in two turns is two rows (not
// folded as a repeat).
func TestAccessLogTurn(t *testing.T) {
	store, err := episodes.Init(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	a := NewAccessLog(store, slog.Default(), false)
	var turn atomic.Value
	turn.Store("before t0001")
	a.SetTurn(func() string { return turn.Load().(string) })
	a.Add("/mine/notes.md", "note", 1)
	turn.Store("t0001")
	a.Add("/mine/notes.md", "note", 1)
	a.Add("/episodes/ep_000001/state/state.json", "episode", 1)
	turn.Store("after t0001")
	a.Add("/mine/notes.md", "note-write", 1)
	a.Close()
	b, err := os.ReadFile(store.Path(episodes.MetaDir, AccessFileName))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r AccessRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("row %q: %v", line, err)
		}
		got = append(got, r.Turn+" "+r.Path)
	}
	want := []string{"before t0001 /mine/notes.md", "t0001 /mine/notes.md", "t0001 /episodes/ep_000001/state/state.json", "after t0001 /mine/notes.md"}
	if !slices.Equal(got, want) {
		t.Errorf("rows:\n got %q\nwant %q", got, want)
	}
}
