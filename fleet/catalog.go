package fleet

import (
	"bytes"
	"sort"
	"sync"

	"github.com/mfm-project/mfm/episodes"
)

// catalog is this mount's copy of the other agents' shipped rows, kept in
// memory and fed by the follower. Rows are immutable once shipped, so it
// only grows.
type catalog struct {
	self   string // this agent, never held
	mu     sync.RWMutex
	agents map[string]*agentView
}

type agentView struct {
	lives map[int]*lifeView
	max   int // newest life with rows
}

type lifeView struct {
	ids   []string // episode ids in id order
	eps   map[string]*episodeView
	index []byte // index.jsonl: the rows in id order, one per line
}

type episodeView struct {
	num   int64
	row   []byte
	files []fileEntry
}

func newCatalog(self string) *catalog { return &catalog{self: self, agents: map[string]*agentView{}} }

// add records a shipped row; a row already present is ignored. It reports
// whether the row was new.
func (c *catalog) add(agent string, life int, id string, row []byte, files []fileEntry) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	a := c.agents[agent]
	if a == nil {
		a = &agentView{lives: map[int]*lifeView{}}
		c.agents[agent] = a
	}
	l := a.lives[life]
	if l == nil {
		l = &lifeView{eps: map[string]*episodeView{}}
		a.lives[life] = l
	}
	if l.eps[id] != nil {
		return false
	}
	num, _ := episodes.ParseEpisodeID(id)
	l.eps[id] = &episodeView{num: num, row: row, files: files}
	if life > a.max {
		a.max = life
	}
	n := len(l.ids)
	if n == 0 || l.eps[l.ids[n-1]].num < num {
		l.ids = append(l.ids, id)
		l.index = append(append(l.index, row...), '\n')
		return true
	}
	// Out of order (rows committed out of seq order): insert and rebuild.
	i := sort.Search(n, func(i int) bool { return l.eps[l.ids[i]].num > num })
	l.ids = append(l.ids[:i], append([]string{id}, l.ids[i:]...)...)
	var b bytes.Buffer
	for _, x := range l.ids {
		b.Write(l.eps[x].row)
		b.WriteByte('\n')
	}
	l.index = b.Bytes()
	return true
}

// count is the number of rows held for agent's life.
func (c *catalog) count(agent string, life int) int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if a := c.agents[agent]; a != nil && a.lives[life] != nil {
		return len(a.lives[life].ids)
	}
	return 0
}

// agentNames lists the agents with rows, sorted.
func (c *catalog) agentNames() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]string, 0, len(c.agents))
	for n := range c.agents {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// currentLife is agent's newest life with rows (0: unknown agent).
func (c *catalog) currentLife(agent string) int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if a := c.agents[agent]; a != nil {
		return a.max
	}
	return 0
}

// lives lists agent's lives with rows, ascending.
func (c *catalog) lives(agent string) []int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	a := c.agents[agent]
	if a == nil {
		return nil
	}
	out := make([]int, 0, len(a.lives))
	for n := range a.lives {
		out = append(out, n)
	}
	sort.Ints(out)
	return out
}

// indexBytes is agent's life's index.jsonl (shared, never modified: the
// slice is capped at its length).
func (c *catalog) indexBytes(agent string, life int) ([]byte, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	a := c.agents[agent]
	if a == nil || a.lives[life] == nil {
		return nil, false
	}
	b := a.lives[life].index
	return b[:len(b):len(b)], true
}

// ids lists the episode ids of agent's life, in order.
func (c *catalog) ids(agent string, life int) []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	a := c.agents[agent]
	if a == nil || a.lives[life] == nil {
		return nil
	}
	return append([]string(nil), a.lives[life].ids...)
}

// episode returns a shipped episode.
func (c *catalog) episode(agent string, life int, id string) *episodeView {
	c.mu.RLock()
	defer c.mu.RUnlock()
	a := c.agents[agent]
	if a == nil || a.lives[life] == nil {
		return nil
	}
	return a.lives[life].eps[id]
}
