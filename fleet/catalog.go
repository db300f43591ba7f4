package fleet

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/mfm-project/mfm/episodes"
)

// catalog is this mount's directory of the other agents' shipped rows,
// fed by the follower. Rows are immutable once shipped, so it only grows.
// What it holds in memory per row is the episode id, its number and its
// file list (~100–300 bytes); the rows themselves (index.jsonl of each
// agent's life, the bulk) are kept in files under dir, written as rows
// arrive and read when index.jsonl is read.
type catalog struct {
	self   string // this agent, never held
	dir    string // one index file per agent and life
	mu     sync.RWMutex
	agents map[string]*agentView
}

type agentView struct {
	lives map[int]*lifeView
	max   int // newest life with rows
}

type lifeView struct {
	ids  []string // episode ids in id order
	eps  map[string]*episodeView
	path string   // index.jsonl: the rows in id order, one per line
	size int64    // bytes of path that are complete rows
	f    *os.File // path, open for appending
}

type episodeView struct {
	num   int64
	files []fileEntry
}

// newCatalog returns an empty catalog keeping its index files in dir
// (emptied first: the follower loads every row again at start).
func newCatalog(self, dir string) (*catalog, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("fleet catalog: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("fleet catalog: %w", err)
	}
	return &catalog{self: self, dir: dir, agents: map[string]*agentView{}}, nil
}

// close closes the index files.
func (c *catalog) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, a := range c.agents {
		for _, l := range a.lives {
			if l.f != nil {
				l.f.Close()
				l.f = nil
			}
		}
	}
}

// add records a shipped row; a row already present is ignored. It reports
// whether the row was new; an error is a local index file that could not
// be written (the row is then not added, and the follower retries).
func (c *catalog) add(agent string, life int, id string, row []byte, files []fileEntry) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a := c.agents[agent]
	if a == nil {
		a = &agentView{lives: map[int]*lifeView{}}
		c.agents[agent] = a
	}
	l := a.lives[life]
	if l == nil {
		l = &lifeView{eps: map[string]*episodeView{}, path: filepath.Join(c.dir, agent+"."+episodes.LifeName(life)+".jsonl")}
		f, err := os.OpenFile(l.path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			return false, fmt.Errorf("fleet catalog: %w", err)
		}
		l.f = f
		a.lives[life] = l
	}
	if l.eps[id] != nil {
		return false, nil
	}
	num, _ := episodes.ParseEpisodeID(id)
	line := append(append(make([]byte, 0, len(row)+1), row...), '\n')
	n := len(l.ids)
	if n == 0 || l.eps[l.ids[n-1]].num < num {
		if _, err := l.f.Write(line); err != nil {
			// A short write leaves a partial line past size: cut it.
			l.f.Truncate(l.size)
			l.f.Seek(l.size, io.SeekStart)
			return false, fmt.Errorf("fleet catalog: %w", err)
		}
		l.size += int64(len(line))
	} else if err := l.insert(sort.Search(n, func(i int) bool { return l.eps[l.ids[i]].num > num }), line); err != nil {
		// Out of order (rows committed out of seq order).
		return false, err
	}
	i := sort.Search(n, func(i int) bool { return l.eps[l.ids[i]].num > num })
	l.ids = append(l.ids[:i], append([]string{id}, l.ids[i:]...)...)
	l.eps[id] = &episodeView{num: num, files: files}
	if life > a.max {
		a.max = life
	}
	return true, nil
}

// insert rewrites the index file with line as its i-th row: a new file
// renamed over the old one, so a reader holding the old one reads it whole.
func (l *lifeView) insert(i int, line []byte) error {
	old, err := os.ReadFile(l.path)
	if err != nil {
		return fmt.Errorf("fleet catalog: %w", err)
	}
	old = old[:l.size]
	at := 0
	for range i {
		at += bytes.IndexByte(old[at:], '\n') + 1
	}
	b := make([]byte, 0, len(old)+len(line))
	b = append(append(append(b, old[:at]...), line...), old[at:]...)
	tmp := l.path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("fleet catalog: %w", err)
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("fleet catalog: %w", err)
	}
	if err := os.Rename(tmp, l.path); err != nil {
		f.Close()
		return fmt.Errorf("fleet catalog: %w", err)
	}
	l.f.Close()
	l.f, l.size = f, int64(len(b))
	return nil
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

// indexBytes is agent's life's index.jsonl, read from its file.
func (c *catalog) indexBytes(agent string, life int) ([]byte, bool) {
	c.mu.RLock()
	a := c.agents[agent]
	if a == nil || a.lives[life] == nil {
		c.mu.RUnlock()
		return nil, false
	}
	l := a.lives[life]
	// Opened under the lock, so no rewrite comes between: the first size
	// bytes of the file opened are complete rows, whatever is appended.
	f, err := os.Open(l.path)
	size := l.size
	c.mu.RUnlock()
	if err != nil {
		return nil, false
	}
	defer f.Close()
	b := make([]byte, size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, false
	}
	return b, true
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
