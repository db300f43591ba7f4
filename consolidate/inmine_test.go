package consolidate

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/mfm-project/mfm/index"
	"github.com/mfm-project/mfm/index/query"
)

// TestInMine: the in:mine source lists each citation of an existing
// episode with the whole line citing it (not only the matched text), by
// file; citations of missing episodes are left out; and index.Run keeps
// exactly the episodes cited by a line holding the query's words.
func TestInMine(t *testing.T) {
	s := constructed(t)
	if err := os.WriteFile(s.Path("mine", "cave.md"), []byte("# cave\n\nthe cave entrance: ep_000008\nnothing here\nep_000009 ep_000099 by the river\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rs := &Resolver{Store: s}
	cites, err := rs.InMine()(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	notes := "stuck at ep_000003 and episodes/ep_4/frames/000041.png; life 1 step 65; ep_000099 is gone"
	want := []index.Cite{
		{Dir: "episodes/ep_000008", File: "mine/cave.md", Line: "the cave entrance: ep_000008"},
		{Dir: "episodes/ep_000009", File: "mine/cave.md", Line: "ep_000009 ep_000099 by the river"},
		{Dir: "episodes/ep_000003", File: "mine/notes.md", Line: notes},
		{Dir: "episodes/ep_000004", File: "mine/notes.md", Line: notes},
		{Dir: "episodes/ep_000006", File: "mine/notes.md", Line: notes}, // step 65
	}
	if !reflect.DeepEqual(cites, want) {
		t.Errorf("cites:\n%+v\nwant\n%+v", cites, want)
	}

	for q, wantDirs := range map[string][]string{
		"in:mine stuck":           {"episodes/ep_000003", "episodes/ep_000004", "episodes/ep_000006"},
		"in:mine stuck tag:stuck": {"episodes/ep_000003", "episodes/ep_000004"},
		"in:mine cave":            {"episodes/ep_000008"},
		"in:mine river":           {"episodes/ep_000009"},
		"in:mine lava":            nil,
	} {
		pq, err := query.Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		hits, err := index.Run(context.Background(), index.Scan{Store: s}, pq, rs.InMine())
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var dirs []string
		for _, h := range hits {
			dirs = append(dirs, filepath.ToSlash(h.Dir))
		}
		if !reflect.DeepEqual(dirs, wantDirs) {
			t.Errorf("%s: %v, want %v", q, dirs, wantDirs)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := rs.InMine()(ctx); err != context.Canceled {
		t.Errorf("cancelled: %v", err)
	}
}

// TestPreload: Preload reads every life's index in the background,
// without a call asking for it.
func TestPreload(t *testing.T) {
	s := constructed(t)
	rs := &Resolver{Store: s}
	rs.Preload()
	read := func() bool {
		rs.mu.Lock()
		defer rs.mu.Unlock()
		c := rs.lives[s.Path("index.jsonl")]
		return c != nil && len(c.li.ranges) == 15
	}
	for deadline := time.Now().Add(30 * time.Second); !read(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("Preload never read index.jsonl")
		}
	}
}
