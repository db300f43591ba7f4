package fleet

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestFileCacheBound: the cache never holds more than its bound, evicts
// the least recently used file first (a get counts as a use), keeps its
// files across a reopen in modification order, and refuses a file larger
// than the bound.
func TestFileCacheBound(t *testing.T) {
	blob := func(c byte, n int) []byte { return bytes.Repeat([]byte{c}, n) }
	type step struct {
		op   string // put, get, reopen
		key  string
		size int
		held []string // keys expected held after the step
	}
	tests := []struct {
		name  string
		limit int64
		steps []step
	}{
		{"fills up to the bound", 300, []step{
			{op: "put", key: "a/life_1/ep_000001/observation/image.png", size: 100, held: []string{"a/life_1/ep_000001/observation/image.png"}},
			{op: "put", key: "a/life_1/ep_000002/observation/image.png", size: 100, held: []string{"a/life_1/ep_000001/observation/image.png", "a/life_1/ep_000002/observation/image.png"}},
			{op: "put", key: "b/life_1/ep_000001/action.json", size: 100, held: []string{"a/life_1/ep_000001/observation/image.png", "a/life_1/ep_000002/observation/image.png", "b/life_1/ep_000001/action.json"}},
		}},
		{"evicts the least recently put", 250, []step{
			{op: "put", key: "k1", size: 100, held: []string{"k1"}},
			{op: "put", key: "k2", size: 100, held: []string{"k1", "k2"}},
			{op: "put", key: "k3", size: 100, held: []string{"k2", "k3"}},
		}},
		{"a get makes a file recent", 250, []step{
			{op: "put", key: "k1", size: 100, held: []string{"k1"}},
			{op: "put", key: "k2", size: 100, held: []string{"k1", "k2"}},
			{op: "get", key: "k1", size: 100, held: []string{"k1", "k2"}},
			{op: "put", key: "k3", size: 100, held: []string{"k1", "k3"}},
		}},
		{"one large file pushes out several", 250, []step{
			{op: "put", key: "k1", size: 100, held: []string{"k1"}},
			{op: "put", key: "k2", size: 100, held: []string{"k1", "k2"}},
			{op: "put", key: "k3", size: 200, held: []string{"k3"}},
		}},
		{"a file larger than the bound is not kept", 250, []step{
			{op: "put", key: "k1", size: 100, held: []string{"k1"}},
			{op: "put", key: "big", size: 251, held: []string{"k1"}},
		}},
		{"a reopen keeps the files, oldest out first", 250, []step{
			{op: "put", key: "k1", size: 100, held: []string{"k1"}},
			{op: "put", key: "k2", size: 100, held: []string{"k1", "k2"}},
			{op: "reopen", held: []string{"k1", "k2"}},
			{op: "put", key: "k3", size: 100, held: []string{"k2", "k3"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "cache")
			c, err := openFileCache(dir, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			mod := time.Now().Add(-time.Hour)
			sizes := map[string]int{}
			for i, s := range tt.steps {
				switch s.op {
				case "put":
					c.put(s.key, blob(byte('a'+i), s.size))
					sizes[s.key] = s.size
					// Distinct modification times, in put order, for the reopen.
					mod = mod.Add(time.Second)
					os.Chtimes(c.path(s.key), mod, mod)
				case "get":
					if _, ok := c.get(s.key, int64(s.size)); !ok {
						t.Fatalf("step %d: get %s missed", i, s.key)
					}
				case "reopen":
					if c, err = openFileCache(dir, tt.limit); err != nil {
						t.Fatal(err)
					}
				}
				want := map[string]bool{}
				var total int64
				for _, k := range s.held {
					want[k] = true
					total += int64(sizes[k])
					if !held(c, k, sizes[k]) {
						t.Fatalf("step %d (%s %s): %s not held", i, s.op, s.key, k)
					}
				}
				for k := range sizes {
					if want[k] {
						continue
					}
					if held(c, k, sizes[k]) {
						t.Fatalf("step %d (%s %s): %s still held", i, s.op, s.key, k)
					}
					if _, err := os.Stat(c.path(k)); !os.IsNotExist(err) {
						t.Fatalf("step %d: evicted %s still on disk (%v)", i, k, err)
					}
				}
				if got := c.bytes(); got != total || got > tt.limit {
					t.Fatalf("step %d: %d bytes held, want %d (bound %d)", i, got, total, tt.limit)
				}
			}
		})
	}
}

// TestFileCacheMiss: a held file of another size than asked, or one
// removed behind the cache's back, is a miss (and is forgotten), and a
// reopen with a smaller bound evicts at once; temporary files of an
// interrupted write are removed.
func TestFileCacheMiss(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	c, err := openFileCache(dir, 1000)
	if err != nil {
		t.Fatal(err)
	}
	c.put("a/x", make([]byte, 10))
	if _, ok := c.get("a/x", 11); ok {
		t.Fatal("get with another size hit")
	}
	c.put("a/y", make([]byte, 10))
	os.Remove(c.path("a/y"))
	if _, ok := c.get("a/y", 10); ok {
		t.Fatal("get of a removed file hit")
	}
	if got := c.bytes(); got != 10 {
		t.Fatalf("%d bytes held after the removed file was found missing, want 10", got)
	}
	c.put("a/z", make([]byte, 300))
	os.WriteFile(filepath.Join(dir, "a", "w.tmp-1-x"), []byte("partial"), 0o644)
	c2, err := openFileCache(dir, 305)
	if err != nil {
		t.Fatal(err)
	}
	if got := c2.bytes(); got > 305 {
		t.Fatalf("reopened with bound 305: %d bytes held", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "a", "w.tmp-1-x")); !os.IsNotExist(err) {
		t.Fatalf("temporary file left: %v", err)
	}
}

// held reports whether c holds key with size bytes on disk, without
// counting as a use.
func held(c *fileCache, key string, size int) bool {
	c.mu.Lock()
	_, ok := c.items[key]
	c.mu.Unlock()
	info, err := os.Stat(c.path(key))
	return ok && err == nil && info.Size() == int64(size)
}
