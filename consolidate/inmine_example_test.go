package consolidate_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/mfm-project/mfm/consolidate"
	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/index"
	"github.com/mfm-project/mfm/index/query"
)

// in:mine keeps the episodes cited by a paragraph or list item of mine/
// that holds the query's words (on any of its lines): a Resolver joins mine/'s citations to the store's
// index, and InMine hands them to index.Run.
func ExampleResolver_InMine() {
	dir, err := os.MkdirTemp("", "mfm-inmine-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := episodes.Init(dir)
	if err != nil {
		log.Fatal(err)
	}
	var rows strings.Builder
	for i := 1; i <= 3; i++ {
		fmt.Fprintf(&rows, `{"id": "ep_%06d", "path": "episodes/ep_%06d", "kind": "episode", "first_step": %d, "last_step": %d, "action_kind": "go_to", "summary": "walked", "tags": [], "x": 0.5, "y": 0.0, "z": 0.5}`+"\n", i, i, 10*i, 10*i+9)
	}
	os.WriteFile(store.Path("index.jsonl"), []byte(rows.String()), 0o644)
	os.MkdirAll(store.Path("mine"), 0o755)
	os.WriteFile(store.Path("mine", "notes.md"), []byte("- lava below ep_000002\n- the cave entrance,\n  found at step 35\n"), 0o644)

	cites := &consolidate.Resolver{Store: store}
	for _, s := range []string{"in:mine lava", "in:mine cave"} {
		q, _ := query.Parse(s)
		hits, err := index.Run(context.Background(), index.Scan{Store: store}, q, cites.InMine())
		if err != nil {
			log.Fatal(err)
		}
		for _, h := range hits {
			fmt.Println(s, "->", h.Dir)
		}
	}
	// Output:
	// in:mine lava -> episodes/ep_000002
	// in:mine cave -> episodes/ep_000003
}
