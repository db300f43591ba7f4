package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/fleet/fleettest"
	"github.com/mfm-project/mfm/index/query"
)

// TestRangeQueries: newest-first queries with steps: and near: give the
// exact newest matches (as query.Match over every row, in time order)
// whichever plan answers them — a range read by its GiST index and
// sorted, or the walk back over time — including rows whose steps are
// reversed (first_step > last_step), which the steps index must take.
func TestRangeQueries(t *testing.T) {
	tm := newTeam(t)
	ctx := context.Background()
	if err := CreateSchema(ctx, tm.pg); err != nil {
		t.Fatal(err)
	}
	// Steps grow with time, as in a real life: a range early in the
	// history holds only old rows.
	var all []episodes.Row
	var raw [][]byte
	for n := range 2000 {
		var tags []string
		if n%7 == 0 {
			tags = append(tags, "damage")
		}
		r, err := fleettest.Row(episodes.EpisodeID(int64(n)), n, tags...)
		if err != nil {
			t.Fatal(err)
		}
		if n == 150 {
			// Reversed steps: 1509..1500.
			r = []byte(strings.Replace(strings.Replace(string(r), `"first_step": 1500`, `"first_step": 1509`, 1), `"last_step": 1509`, `"last_step": 1500`, 1))
		}
		row, err := episodes.ParseRow(r)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, row)
		raw = append(raw, r)
	}
	if all[150].FirstStep != 1509 {
		t.Fatalf("reversed row not made: %s", raw[150])
	}
	if err := SeedRows(ctx, tm.pg, "hist", 1, raw); err != nil {
		t.Fatal(err)
	}
	bob := tm.agent("bob", false)
	<-bob.node.Ready()
	q := bob.node.Querier(localStub{})
	queries := []string{
		"agent:hist steps:1000..5000 last:5",
		"agent:hist tag:damage steps:1000..5000 last:5",
		"agent:hist steps:1505..1505 last:3",
		"agent:all tag:damage steps:0..100000 last:10",
		"agent:hist near:10,-20 r:8 last:7",
		"agent:hist tag:damage near:0,0 r:30 steps:0..3000 last:4",
		"agent:hist steps:19990..19995 last:5",
		"agent:hist steps:30000..40000 last:5",
	}
	for _, scanMax := range []float64{20000, 10} {
		old := rangeScanMax
		rangeScanMax = scanMax
		for _, s := range queries {
			pq, err := query.Parse(s)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for i := range all {
				if pq.Match(&all[i]) {
					want = append(want, "agents/hist/episodes/"+all[i].ID)
				}
			}
			sort.SliceStable(want, func(i, j int) bool { return false })
			if len(want) > pq.Last {
				want = want[len(want)-pq.Last:]
			}
			_, dirs, err := q.Query(ctx, s)
			if err != nil {
				t.Fatalf("range scan max %v: %q: %v", scanMax, s, err)
			}
			if fmt.Sprint(dirs) != fmt.Sprint(want) {
				t.Errorf("range scan max %v: %q = %v, want %v", scanMax, s, dirs, want)
			}
		}
		rangeScanMax = old
	}
}

// TestLabelRow: a row of an agent: query names its agent and its
// directory in the mount first, and stays valid JSON with every field it
// had; a row that is not an object is left alone.
func TestLabelRow(t *testing.T) {
	tests := []struct{ row, want string }{
		{`{"id": "ep_000044", "path": "episodes/ep_000044"}`, `{"agent": "alice", "episode_dir": "agents/alice/episodes/ep_000044", "id": "ep_000044", "path": "episodes/ep_000044"}`},
		{`{}`, `{"agent": "alice", "episode_dir": "agents/alice/episodes/ep_000044"}`},
		{` { }`, `{"agent": "alice", "episode_dir": "agents/alice/episodes/ep_000044" }`},
		{`[1]`, `[1]`},
		{``, ``},
	}
	for _, tt := range tests {
		got := string(labelRow([]byte(tt.row), "alice", "agents/alice/episodes/ep_000044"))
		if got != tt.want {
			t.Errorf("labelRow(%q) = %q, want %q", tt.row, got, tt.want)
		}
		if strings.HasPrefix(tt.want, "{") && !json.Valid([]byte(got)) {
			t.Errorf("labelRow(%q) is not valid JSON: %s", tt.row, got)
		}
	}
}
