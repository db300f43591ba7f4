package content

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// bigQuery answers every query with rows rows of size bytes each.
func bigQuery(rows, size int) QueryFunc {
	return func(ctx context.Context, query string) ([][]byte, []string, error) {
		out := make([][]byte, rows)
		dirs := make([]string, rows)
		for i := range out {
			out[i] = bytes.Repeat([]byte{'x'}, size)
			dirs[i] = fmt.Sprintf("episodes/ep_%06d", i)
		}
		return out, dirs, nil
	}
}

// TestQueryCacheBudget: however many distinct queries run, the cache
// keeps at most QueryCacheBytes of results, dropping the least recently
// used; a result over a quarter of the budget is answered, not kept.
func TestQueryCacheBudget(t *testing.T) {
	index := filepath.Join(t.TempDir(), "index.jsonl")
	c := NewQueryCache(index, 5*time.Second, bigQuery(256, 4096)) // ~1 MiB a result
	ctx := context.Background()
	for i := 0; i < 100; i++ {
		r, err := c.Get(ctx, fmt.Sprintf("q%d", i))
		if err != nil || len(r.Links()) != 256 {
			t.Fatalf("query %d: %v", i, err)
		}
		if n, b := c.Held(); b > QueryCacheBytes {
			t.Fatalf("after %d queries the cache holds %d results, %d bytes: over its budget of %d", i+1, n, b, QueryCacheBytes)
		}
	}
	n, b := c.Held()
	if n == 0 || n >= 100 {
		t.Errorf("the cache holds %d of 100 results (%d bytes)", n, b)
	}
	t.Logf("after 100 results of ~1 MiB: %d kept, %d bytes", n, b)

	big := NewQueryCache(index, 5*time.Second, bigQuery(1024, QueryCacheBytes/4096)) // ~32 MiB
	r, err := big.Get(ctx, "huge")
	if err != nil || len(r.Links()) != 1024 {
		t.Fatalf("a huge result: %v", err)
	}
	if n, b := big.Held(); n != 0 {
		t.Errorf("a result over a quarter of the budget is kept (%d results, %d bytes)", n, b)
	}
}

// TestQueryCacheBudgetSheets: rendered sheets count in the budget: the
// next access trims what they added.
func TestQueryCacheBudgetSheets(t *testing.T) {
	index := filepath.Join(t.TempDir(), "index.jsonl")
	c := NewQueryCache(index, 5*time.Second, bigQuery(4, 64))
	ctx := context.Background()
	sheet := func(ctx context.Context, frames, labels []string) ([]byte, error) {
		return make([]byte, 4<<20), nil
	}
	for i := 0; i < 40; i++ {
		q := fmt.Sprintf("q%d", i)
		r, err := c.Get(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Sheet(ctx, time.Second, sheet); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Get(ctx, q); err != nil { // the next access, as a read of sheet.png makes
			t.Fatal(err)
		}
		if n, b := c.Held(); b > QueryCacheBytes {
			t.Fatalf("after %d sheets of 4 MiB the cache holds %d results, %d bytes: over its budget of %d", i+1, n, b, QueryCacheBytes)
		}
	}
}
