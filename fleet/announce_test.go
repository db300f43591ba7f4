package fleet

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mfm-project/mfm/episodes"
)

// TestAnnouncement: a row announced whole comes back byte for byte (the
// row's spacing, HTML characters and non-ASCII text included); a row too
// large for a notification, or not valid UTF-8, is announced by its seq
// alone; a payload that is neither is an error.
func TestAnnouncement(t *testing.T) {
	files := []byte(`[{"p":"observation/image.png","n":5000},{"p":"action.json","n":12}]`)
	tests := []struct {
		name  string
		row   string
		whole bool
	}{
		{"plain", `{"id": "ep_000001", "tags": ["stuck"]}`, true},
		{"spacing and html", "{\"id\":\"ep_000002\",  \"text\": \"<a> & b\\u003c \\\"q\\\"\"}", true},
		{"non-ASCII", `{"id": "ep_000003", "text": "grès, 石, ✓"}`, true},
		{"too large", `{"id": "ep_000004", "text": "` + strings.Repeat("x", maxAnnouncement) + `"}`, false},
		{"escapes grow it past the limit", `{"id": "ep_000005", "text": "` + strings.Repeat(`\"`, maxAnnouncement/3) + `"}`, false},
		{"invalid UTF-8", "{\"id\": \"ep_000006\", \"text\": \"\xff\"}", false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seq := int64(100 + i)
			p := announcement(seq, "alice", 2, "ep_x", []byte(tt.row), files)
			if len(p) > maxAnnouncement {
				t.Fatalf("payload of %d bytes", len(p))
			}
			r, whole, err := parseAnnouncement(p)
			if err != nil || whole != tt.whole || r.Seq != seq {
				t.Fatalf("parse: seq %d, whole %v, err %v; want seq %d, whole %v", r.Seq, whole, err, seq, tt.whole)
			}
			if !whole {
				return
			}
			if r.Row != tt.row || r.Agent != "alice" || r.Life != 2 || r.ID != "ep_x" {
				t.Errorf("got %q %d %q row %q, want row %q", r.Agent, r.Life, r.ID, r.Row, tt.row)
			}
			var want []fileEntry
			json.Unmarshal(files, &want)
			if len(r.Files) != 2 || r.Files[0] != want[0] || r.Files[1] != want[1] {
				t.Errorf("files %+v, want %+v", r.Files, want)
			}
		})
	}
	for _, bad := range []string{"", "x", "{}", `{"seq": 5}`, `{"seq": 5, "agent": "a", "id": "ep_000001"}`, `[1]`, `{"seq": "5"}`} {
		if _, whole, err := parseAnnouncement(bad); err == nil || whole {
			t.Errorf("%q: whole %v, err %v; want an error", bad, whole, err)
		}
	}
}

// FuzzParseAnnouncement: any payload is either a row, a seq or an error,
// and a row read back announces the same row.
func FuzzParseAnnouncement(f *testing.F) {
	f.Add("42")
	f.Add(announcement(7, "alice", 1, "ep_000001", []byte(`{"id": "ep_000001"}`), []byte(`[{"p":"a.json","n":3}]`)))
	f.Add(`{"seq": 1, "agent": "a", "life": 1, "id": "x", "row": "{}", "files": null}`)
	f.Fuzz(func(t *testing.T, payload string) {
		r, whole, err := parseAnnouncement(payload)
		if err != nil && whole {
			t.Fatal("an error and a row")
		}
		if !whole {
			return
		}
		fj, _ := json.Marshal(r.Files)
		again, whole2, err := parseAnnouncement(announcement(r.Seq, r.Agent, r.Life, r.ID, []byte(r.Row), fj))
		if err != nil {
			t.Fatal(err)
		}
		if whole2 && (again.Row != r.Row || again.Agent != r.Agent || again.ID != r.ID || again.Seq != r.Seq) {
			t.Errorf("announced again: %+v, want %+v", again, r)
		}
	})
}

// TestRowsArriveAnnounced: another agent's rows reach the follower from
// their announcements, without a read of the database, byte for byte; a
// row too large to announce whole arrives by the database read.
func TestRowsArriveAnnounced(t *testing.T) {
	tm := newTeam(t)
	alice, bob := tm.agent("alice", false), tm.agent("bob", false)
	<-bob.node.Ready()
	before := bob.node.follow.announced.Load()
	alice.record(t, 3, "stuck")
	waitFor(t, 20*time.Second, "bob to see alice's 3 episodes", func() bool { return bob.node.cat.count("alice", 1) == 3 })
	if got := bob.node.follow.announced.Load() - before; got != 3 {
		t.Errorf("%d of 3 rows added from their announcement", got)
	}
	long := strings.Repeat("long-tag-", maxAnnouncement/9+1)
	alice.record(t, 1, long)
	waitFor(t, 20*time.Second, "bob to see alice's large row", func() bool { return bob.node.cat.count("alice", 1) == 4 })
	if got := bob.node.follow.announced.Load() - before; got != 3 {
		t.Errorf("%d rows added from their announcement, want 3 (the large one read from the database)", got)
	}
	idx, ok := bob.node.cat.indexBytes("alice", 1)
	local, err := os.ReadFile(alice.store.Path(episodes.IndexFileName))
	if !ok || err != nil || string(idx) != string(local) {
		t.Errorf("bob's copy of alice's index.jsonl differs from hers:\n%s\nwant\n%s", idx, local)
	}
	if _, _, err := bob.node.Tree().Open(context.Background(), "alice/episodes/ep_000003/action.json"); err != nil {
		t.Errorf("the large row's episode: %v", err)
	}
}
