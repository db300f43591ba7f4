package view

import (
	"container/list"
	"sync"
)

// lru is a mutex-guarded least-recently-used cache bounded by the total
// size of its values.
type lru[V any] struct {
	mu           sync.Mutex
	max          int64
	used         int64
	size         func(V) int64
	ll           *list.List
	items        map[string]*list.Element
	hits, misses int64
}

type lruEntry[V any] struct {
	key  string
	val  V
	size int64
}

func newLRU[V any](maxBytes int64, size func(V) int64) *lru[V] {
	return &lru[V]{max: maxBytes, size: size, ll: list.New(), items: map[string]*list.Element{}}
}

func (c *lru[V]) get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		c.ll.MoveToFront(e)
		c.hits++
		return e.Value.(*lruEntry[V]).val, true
	}
	c.misses++
	var zero V
	return zero, false
}

func (c *lru[V]) put(key string, v V) {
	n := c.size(v)
	if n > c.max/4 { // one entry never takes more than a quarter
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		old := e.Value.(*lruEntry[V])
		c.used += n - old.size
		old.val, old.size = v, n
		c.ll.MoveToFront(e)
	} else {
		c.items[key] = c.ll.PushFront(&lruEntry[V]{key: key, val: v, size: n})
		c.used += n
	}
	for c.used > c.max && c.ll.Len() > 0 {
		e := c.ll.Back()
		ent := e.Value.(*lruEntry[V])
		c.ll.Remove(e)
		delete(c.items, ent.key)
		c.used -= ent.size
	}
}

// stats returns the number of entries, bytes used, hits and misses.
func (c *lru[V]) stats() (n int, used, hits, misses int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len(), c.used, c.hits, c.misses
}
