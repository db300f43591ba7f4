package index_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/index"
	"github.com/mfm-project/mfm/index/query"
)

// exampleStore writes a store of six episodes: a walk east along z=0,
// stuck twice on the way.
func exampleStore() (*episodes.Store, func()) {
	dir, err := os.MkdirTemp("", "mfm-index-example")
	if err != nil {
		log.Fatal(err)
	}
	store, err := episodes.Init(dir)
	if err != nil {
		log.Fatal(err)
	}
	var rows strings.Builder
	for i, r := range []struct {
		x       int
		tag     string
		summary string
	}{
		{0, "initial", "initial state"},
		{5, "walk", "go_to the birch"},
		{10, "stuck", "go_to blocked by a tree"},
		{12, "walk", "go_to around the tree"},
		{20, "stuck", "go_to stuck at the river"},
		{21, "walk", "go_to along the river"},
	} {
		fmt.Fprintf(&rows, `{"id": "ep_%06d", "path": "episodes/ep_%06d", "kind": "episode", "first_step": %d, "last_step": %d, "action_kind": "go_to", "summary": %q, "tags": [%q], "x": %d.5, "y": 0.0, "z": 0.5}`+"\n",
			i, i, 10*i, 10*i+9, r.summary, r.tag, r.x)
	}
	if err := os.WriteFile(store.Path("index.jsonl"), []byte(rows.String()), 0o644); err != nil {
		log.Fatal(err)
	}
	return store, func() { os.RemoveAll(dir) }
}

// Run cue queries over a store's cue index (built under store/.mfm/cue
// on first Open, brought up to date on every later one). Hits come in
// chronological order with the row as recorded and its episode directory.
func ExampleOpen() {
	store, cleanup := exampleStore()
	defer cleanup()
	x, st, err := index.Open(context.Background(), store, index.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer x.Close()
	fmt.Println("indexed", st.Indexed, "rows")

	for _, s := range []string{
		"tag:stuck",
		"tree near:11,0 r:3",
		"steps:15..35 last:1",
		`"the river"`,
	} {
		q, err := query.Parse(s)
		if err != nil {
			log.Fatal(err)
		}
		hits, err := index.Run(context.Background(), x, q, nil)
		if err != nil {
			log.Fatal(err)
		}
		var dirs []string
		for _, h := range hits {
			dirs = append(dirs, h.Dir)
		}
		fmt.Printf("%-22s %v\n", s, dirs)
	}
	// Output:
	// indexed 6 rows
	// tag:stuck              [episodes/ep_000002 episodes/ep_000004]
	// tree near:11,0 r:3     [episodes/ep_000002 episodes/ep_000003]
	// steps:15..35 last:1    [episodes/ep_000003]
	// "the river"            [episodes/ep_000004 episodes/ep_000005]
}

// A Querier answers the mount's q/<query>/ directories: the matching
// rows as recorded and their episode directories, or, for a malformed
// query, an error naming the bad term.
func ExampleQuerier() {
	store, cleanup := exampleStore()
	defer cleanup()
	qr := &index.Querier{Searcher: index.Scan{Store: store}}
	_, dirs, err := qr.Query(context.Background(), "tag:stuck last:1")
	fmt.Println(dirs, err)
	_, _, err = qr.Query(context.Background(), "tag:stuck steps:9..3")
	fmt.Println(err)
	// Output:
	// [episodes/ep_000004] <nil>
	// query: bad term "steps:9..3": steps: wants A..B with whole numbers 0 <= A <= B, e.g. steps:100..200
}

// Scan answers like the cue index, reading index.jsonl: it needs no
// index and no lock, and is what a Live searcher falls back to.
func ExampleScan() {
	store, cleanup := exampleStore()
	defer cleanup()
	q, _ := query.Parse("tag:walk last:2")
	hits, err := index.Scan{Store: store}.Search(context.Background(), q)
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range hits {
		fmt.Printf("life %d %s %.40s…\n", h.Life, h.Dir, h.Row)
	}
	// Output:
	// life 1 episodes/ep_000003 {"id": "ep_000003", "path": "episodes/ep…
	// life 1 episodes/ep_000005 {"id": "ep_000005", "path": "episodes/ep…
}

// A long-running process (a mount) serves queries with OpenLive: by a
// scan at once, by the cue index once it is open (Ready), kept up to date
// as rows are appended, until Close.
func ExampleOpenLive() {
	store, cleanup := exampleStore()
	defer cleanup()
	live := index.OpenLive(store, index.LiveOptions{})
	defer live.Close()
	<-live.Ready()

	q, _ := query.Parse("tag:stuck")
	hits, err := live.Search(context.Background(), q)
	fmt.Println(len(hits), err)
	// Output:
	// 2 <nil>
}
