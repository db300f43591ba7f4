package fleet

import (
	"container/list"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultCacheBytes is the default bound of a mount's local cache of
// other agents' episode files (Config.CacheBytes).
const DefaultCacheBytes int64 = 1 << 30

// fileCache is the local disk cache of other agents' episode files under
// one directory, bounded in bytes: shipped episodes never change, so a
// file once fetched is good for ever, and the least recently used files
// are removed when the total would pass the bound. Entries are keyed by
// their slash path under the directory. What it holds survives a restart:
// at open the directory is scanned and its files enter the LRU order by
// modification time (oldest first out). A pinned file (pin, putPinned)
// is not evicted until it is unpinned: a draw reads the files it fetched
// from disk, and they must still be there when it does.
type fileCache struct {
	dir   string
	limit int64

	mu    sync.Mutex
	total int64
	order *list.List               // front: most recently used
	items map[string]*list.Element // key -> element holding *cacheItem
}

type cacheItem struct {
	key  string
	size int64
	pins int // uses in progress (a draw reading the file); > 0: not evicted
}

// openFileCache opens (creating) the cache in dir with a bound of limit
// bytes (<= 0: DefaultCacheBytes), evicting at once if the files already
// there pass it. Leftover temporary files of an interrupted write are
// removed.
func openFileCache(dir string, limit int64) (*fileCache, error) {
	if limit <= 0 {
		limit = DefaultCacheBytes
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("fleet cache: %w", err)
	}
	c := &fileCache{dir: dir, limit: limit, order: list.New(), items: map[string]*list.Element{}}
	type found struct {
		key  string
		size int64
		mod  time.Time
	}
	var all []found
	err := filepath.WalkDir(dir, func(p string, d iofs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if strings.Contains(d.Name(), ".tmp-") {
			os.Remove(p)
			return nil
		}
		info, err := d.Info()
		if err != nil || !info.Mode().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return nil
		}
		all = append(all, found{filepath.ToSlash(rel), info.Size(), info.ModTime()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("fleet cache: %w", err)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].mod.Before(all[j].mod) })
	for _, f := range all {
		c.items[f.key] = c.order.PushFront(&cacheItem{key: f.key, size: f.size})
		c.total += f.size
	}
	c.mu.Lock()
	c.evict()
	c.mu.Unlock()
	return c, nil
}

func (c *fileCache) path(key string) string { return filepath.Join(c.dir, filepath.FromSlash(key)) }

// get returns the cached bytes of key when it is held with size bytes.
func (c *fileCache) get(key string, size int64) ([]byte, bool) {
	c.mu.Lock()
	e := c.items[key]
	if e == nil || e.Value.(*cacheItem).size != size {
		c.mu.Unlock()
		return nil, false
	}
	c.order.MoveToFront(e)
	c.mu.Unlock()
	b, err := os.ReadFile(c.path(key))
	if err != nil || int64(len(b)) != size {
		c.drop(key)
		return nil, false
	}
	return b, true
}

// put stores b as key and evicts the least recently used files past the
// bound. A file larger than the whole bound is not kept. Errors writing
// are not the reader's: the bytes were served, the cache just misses.
func (c *fileCache) put(key string, b []byte) { c.store(key, b, false) }

// putPinned is put, and pins key when it is held (it reports whether it
// is): the file stays until unpin, even past the bound.
func (c *fileCache) putPinned(key string, b []byte) bool { return c.store(key, b, true) }

func (c *fileCache) store(key string, b []byte, pin bool) bool {
	size := int64(len(b))
	if size > c.limit {
		return false
	}
	p := c.path(key)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return false
	}
	tmp := p + ".tmp-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if err := os.WriteFile(tmp, b, 0o444); err != nil {
		os.Remove(tmp)
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return false
	}
	e := c.items[key]
	if e != nil {
		c.total -= e.Value.(*cacheItem).size
		e.Value.(*cacheItem).size = size
		c.order.MoveToFront(e)
	} else {
		e = c.order.PushFront(&cacheItem{key: key, size: size})
		c.items[key] = e
	}
	c.total += size
	if pin {
		e.Value.(*cacheItem).pins++
	}
	c.evict()
	return true
}

// pin pins key when it is held with size bytes (a use: it becomes the
// most recent) and reports whether it is; a pinned file is not evicted
// until unpin.
func (c *fileCache) pin(key string, size int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.items[key]
	if e == nil || e.Value.(*cacheItem).size != size {
		return false
	}
	e.Value.(*cacheItem).pins++
	c.order.MoveToFront(e)
	return true
}

// unpin releases one pin of each key (pin, putPinned) and evicts what
// now passes the bound.
func (c *fileCache) unpin(keys ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range keys {
		if e := c.items[k]; e != nil && e.Value.(*cacheItem).pins > 0 {
			e.Value.(*cacheItem).pins--
		}
	}
	c.evict()
}

// drop forgets key and removes its file.
func (c *fileCache) drop(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.items[key]; e != nil {
		c.remove(e)
	}
}

// evict removes least recently used files that are not pinned until the
// total is within the bound, or only pinned files are left (c.mu held).
func (c *fileCache) evict() {
	for e := c.order.Back(); e != nil && c.total > c.limit; {
		prev := e.Prev()
		if e.Value.(*cacheItem).pins == 0 {
			c.remove(e)
		}
		e = prev
	}
}

func (c *fileCache) remove(e *list.Element) {
	it := e.Value.(*cacheItem)
	c.order.Remove(e)
	delete(c.items, it.key)
	c.total -= it.size
	p := c.path(it.key)
	os.Remove(p)
	// Empty directories inside an episode go too (Remove fails on one
	// that still holds files, which is what stops it); an agent's life
	// directory and its episodes/ stay, since a view renderer holds the
	// life directory open.
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		rel, err := filepath.Rel(c.dir, d)
		if err != nil || strings.Count(filepath.ToSlash(rel), "/") < 3 || os.Remove(d) != nil {
			break
		}
	}
}

// bytes is the total size of the cached files.
func (c *fileCache) bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}
