// Package lru is a least-recently-used cache bounded by the total size
// of its values (a byte budget), safe for concurrent use. The daemon's
// caches of decoded frames, rendered views and view bytes use it.
package lru

import (
	"container/list"
	"sync"
)

// Cache maps string keys to values of type V, evicting the least
// recently used entries when the sizes of its values add up to more than
// its budget. A value larger than a quarter of the budget is not kept.
type Cache[V any] struct {
	mu           sync.Mutex
	max          int64
	used         int64
	size         func(V) int64
	ll           *list.List
	items        map[string]*list.Element
	hits, misses int64
}

type entry[V any] struct {
	key  string
	val  V
	size int64
}

// New returns an empty cache of at most maxBytes, as size counts a value.
func New[V any](maxBytes int64, size func(V) int64) *Cache[V] {
	return &Cache[V]{max: maxBytes, size: size, ll: list.New(), items: map[string]*list.Element{}}
}

// Get returns the value of key and marks it used.
func (c *Cache[V]) Get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		c.ll.MoveToFront(e)
		c.hits++
		return e.Value.(*entry[V]).val, true
	}
	c.misses++
	var zero V
	return zero, false
}

// Put stores v under key, then evicts the least recently used entries
// until the cache is within its budget.
func (c *Cache[V]) Put(key string, v V) {
	n := c.size(v)
	if n > c.max/4 { // one entry never takes more than a quarter
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		old := e.Value.(*entry[V])
		c.used += n - old.size
		old.val, old.size = v, n
		c.ll.MoveToFront(e)
	} else {
		c.items[key] = c.ll.PushFront(&entry[V]{key: key, val: v, size: n})
		c.used += n
	}
	for c.used > c.max && c.ll.Len() > 0 {
		e := c.ll.Back()
		ent := e.Value.(*entry[V])
		c.ll.Remove(e)
		delete(c.items, ent.key)
		c.used -= ent.size
	}
}

// Stats returns the number of entries, the bytes they use, and the hits
// and misses of Get.
func (c *Cache[V]) Stats() (n int, used, hits, misses int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len(), c.used, c.hits, c.misses
}
