package fleet

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mfm-project/mfm/episodes"
)

// TestCatalogIndexFile: index.jsonl of an agent's life is its rows in id
// order whatever order they arrive in (rows commit out of seq order), a
// row added twice is kept once, and the rows live in a file under the
// catalog's directory rather than in memory.
func TestCatalogIndexFile(t *testing.T) {
	tests := []struct {
		name  string
		order []int // episode numbers in arrival order
	}{
		{"in order", []int{1, 2, 3, 4}},
		{"one late", []int{1, 3, 4, 2}},
		{"reversed", []int{4, 3, 2, 1}},
		{"first late, repeated", []int{2, 3, 3, 1, 2, 4}},
	}
	row := func(n int) []byte {
		return []byte(fmt.Sprintf(`{"id": "%s", "n": %d}`, episodes.EpisodeID(int64(n)), n))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "index")
			c, err := newCatalog("bob", dir)
			if err != nil {
				t.Fatal(err)
			}
			defer c.close()
			seen := map[int]bool{}
			for _, n := range tt.order {
				added, err := c.add("alice", 1, episodes.EpisodeID(int64(n)), row(n), nil)
				if err != nil {
					t.Fatal(err)
				}
				if added == seen[n] {
					t.Errorf("add %d: added %v, seen before %v", n, added, seen[n])
				}
				seen[n] = true
				// Readable at every step: the rows so far, in order.
				var want strings.Builder
				for m := 1; m <= 4; m++ {
					if seen[m] {
						want.Write(row(m))
						want.WriteByte('\n')
					}
				}
				got, ok := c.indexBytes("alice", 1)
				if !ok || string(got) != want.String() {
					t.Fatalf("after %d: index.jsonl =\n%s\nwant\n%s", n, got, want.String())
				}
			}
			if ids := c.ids("alice", 1); strings.Join(ids, " ") != "ep_000001 ep_000002 ep_000003 ep_000004" {
				t.Errorf("ids = %v", ids)
			}
			onDisk, err := os.ReadFile(filepath.Join(dir, "alice.life_1.jsonl"))
			if err != nil || strings.Count(string(onDisk), "\n") != 4 {
				t.Errorf("index file holds %q (err %v)", onDisk, err)
			}
		})
	}
	// A new catalog in the same directory starts empty (the follower
	// loads every row again).
	dir := filepath.Join(t.TempDir(), "index")
	c, _ := newCatalog("bob", dir)
	c.add("alice", 1, "ep_000001", row(1), nil)
	c.close()
	c2, err := newCatalog("bob", dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.close()
	if _, ok := c2.indexBytes("alice", 1); ok {
		t.Error("a new catalog holds rows of the last one")
	}
}

// TestCatalogFileLists: each row's file list comes back from disk for its
// own id, whatever order rows arrive in and whatever their ids look like
// (an id that is not ep_NNNNNN is kept too), and an unknown id has none.
func TestCatalogFileLists(t *testing.T) {
	c, err := newCatalog("bob", filepath.Join(t.TempDir(), "index"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	ids := []string{"ep_000003", "ep_000001", "paper-7", "ep_1234567", "ep_000002", "x"}
	for i, id := range ids {
		files := []fileEntry{{Path: "observation/image.png", Size: int64(1000 + i)}, {Path: "action.json", Size: int64(i)}}
		if _, err := c.add("alice", 1, id, []byte(fmt.Sprintf(`{"id": %q}`, id)), files); err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.Join(c.ids("alice", 1), " "); got != "paper-7 x ep_000001 ep_000002 ep_000003 ep_1234567" {
		t.Errorf("ids = %s", got)
	}
	for i, id := range ids {
		ep := c.episode("alice", 1, id)
		if ep == nil || len(ep.files) != 2 || ep.files[0].Size != int64(1000+i) || ep.files[1].Size != int64(i) {
			t.Errorf("episode %s: %+v", id, ep)
		}
		if !c.has("alice", 1, id) {
			t.Errorf("has(%s) = false", id)
		}
	}
	for _, id := range []string{"ep_000004", "ep_0000001", "paper-8", ""} {
		if c.episode("alice", 1, id) != nil || c.has("alice", 1, id) {
			t.Errorf("%q: found, want none", id)
		}
	}
}

// TestCatalogMemoryPerRow: the catalog's heap per row stays small (the
// rows and file lists are on disk), so a mount can follow a million rows.
func TestCatalogMemoryPerRow(t *testing.T) {
	c, err := newCatalog("bob", filepath.Join(t.TempDir(), "index"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	const n = 100000
	files := []fileEntry{{Path: "observation/image.png", Size: 50000}, {Path: "state/state.json", Size: 900}, {Path: "action.json", Size: 80}, {Path: "outcome.json", Size: 120}}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range n {
		id := episodes.EpisodeID(int64(i))
		if _, err := c.add("alice", 1, id, []byte(`{"id": "`+id+`", "tags": ["stuck"], "text": "a row of about a hundred bytes"}`), files); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perRow := (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / n
	t.Logf("%.1f bytes of heap per row", perRow)
	if perRow > 48 {
		t.Errorf("%.1f bytes of heap per row, want at most 48", perRow)
	}
	if ep := c.episode("alice", 1, episodes.EpisodeID(n/2)); ep == nil || len(ep.files) != 4 {
		t.Errorf("row %d's files: %+v", n/2, ep)
	}
}
