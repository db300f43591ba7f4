package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/fleet/fleettest"
	"github.com/mfm-project/mfm/index/query"
)

// TestRangeQueries: newest-first queries with and without steps: and
// near: give the exact newest matches (as query.Match over every row, in
// time order, then agent and episode), whether the at index is walked or
// a range's GiST index is read newest first; rows whose steps are
// reversed (first_step > last_step) are found, and rows sharing a time
// are ordered the same across pages.
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
	// Rows that share a time: more than a page of them, and a page that
	// ends inside them, must come out as every other row does.
	var tied [][]byte
	for n := range 300 {
		r, err := fleettest.Row(episodes.EpisodeID(int64(n)), 5000+n, "tie")
		if err != nil {
			t.Fatal(err)
		}
		r = timeRe.ReplaceAll(r, []byte(`"time": "2026-01-02T03:04:05.000000Z"`))
		row, err := episodes.ParseRow(r)
		if err != nil {
			t.Fatal(err)
		}
		tied = append(tied, r)
		all = append(all, row)
	}
	if err := SeedRows(ctx, tm.pg, "tied", 1, tied); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "bob to hold the tied rows", func() bool { return bob.node.cat.count("tied", 1) == 300 })
	queries = append(queries,
		"agent:tied tag:tie last:100",
		"agent:tied tag:tie steps:50000..50500 last:30",
		"agent:all tag:tie last:250",
		"agent:all steps:0..1000000 last:400",
	)
	for _, s := range queries {
		pq, err := query.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		// Every row in the shared order (time, then agent and number).
		type keyed struct {
			agent string
			r     *episodes.Row
		}
		var rows []keyed
		for i := range all {
			agent := "hist"
			if i >= 2000 {
				agent = "tied"
			}
			if (pq.Agent == "" || pq.Agent == agent) && pq.Match(&all[i]) {
				rows = append(rows, keyed{agent, &all[i]})
			}
		}
		sort.SliceStable(rows, func(i, j int) bool {
			ti, tj := rowTime(rows[i].r.Raw), rowTime(rows[j].r.Raw)
			if !ti.Equal(tj) {
				return ti.Before(tj)
			}
			if rows[i].agent != rows[j].agent {
				return rows[i].agent < rows[j].agent
			}
			return rows[i].r.ID < rows[j].r.ID
		})
		var want []string
		for _, k := range rows {
			want = append(want, "agents/"+k.agent+"/episodes/"+k.r.ID)
		}
		if len(want) > pq.Last {
			want = want[len(want)-pq.Last:]
		}
		_, dirs, err := q.Query(ctx, s)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if fmt.Sprint(dirs) != fmt.Sprint(want) {
			t.Errorf("%q = %v, want %v", s, dirs, want)
		}
	}
}

var timeRe = regexp.MustCompile(`"time": "[^"]*"`)

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
