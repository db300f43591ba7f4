package fleet

import (
	"fmt"
	"os"
	"path/filepath"
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
