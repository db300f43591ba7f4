package fleet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"

	"github.com/mfm-project/mfm/episodes"
)

// catalog is this mount's directory of the other agents' shipped rows,
// fed by the follower. Rows are immutable once shipped, so it only grows.
// It holds 16 bytes in memory per row (the episode's number and where its
// file list is on disk); the rows themselves (index.jsonl of each agent's
// life, the bulk) and the file lists are files under dir, appended as rows
// arrive and read when asked for.
type catalog struct {
	self   string // this agent, never held
	dir    string // per agent and life: index.jsonl's rows and the file lists
	mu     sync.RWMutex
	agents map[string]*agentView
}

type agentView struct {
	lives map[int]*lifeView
	max   int // newest life with rows
}

type lifeView struct {
	rows   []rowRef // in id order
	oddIDs []string // ids that are not ep_NNNNNN, by -(rowRef.num+1)
	path   string   // index.jsonl: the rows in id order, one per line
	size   int64    // bytes of path that are complete rows
	f      *os.File // path, open for appending
	lists  *os.File // the file lists, one JSON line per row in arrival order
	listsN int64    // bytes of lists that are complete lines
}

// rowRef is one row in memory: its episode number (negative for an id
// that is not ep_NNNNNN: -(its index in oddIDs)-1, sorting before the
// others) and the offset of its file list in lifeView.lists.
type rowRef struct {
	num   int64
	files int64
}

// episodeView is a shipped episode's file list, read from disk.
type episodeView struct {
	files []fileEntry
}

// fileList is a line of lifeView.lists.
type fileList struct {
	ID    string      `json:"id"`
	Files []fileEntry `json:"files"`
}

// newCatalog returns an empty catalog keeping its files in dir (emptied
// first: the follower loads every row again at start).
func newCatalog(self, dir string) (*catalog, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("fleet catalog: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("fleet catalog: %w", err)
	}
	return &catalog{self: self, dir: dir, agents: map[string]*agentView{}}, nil
}

// close closes the catalog's files.
func (c *catalog) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, a := range c.agents {
		for _, l := range a.lives {
			if l.f != nil {
				l.f.Close()
				l.f = nil
			}
			if l.lists != nil {
				l.lists.Close()
				l.lists = nil
			}
		}
	}
}

// newLifeView creates the files of agent's life.
func (c *catalog) newLifeView(agent string, life int) (*lifeView, error) {
	base := filepath.Join(c.dir, agent+"."+episodes.LifeName(life))
	l := &lifeView{path: base + ".jsonl"}
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("fleet catalog: %w", err)
	}
	lists, err := os.OpenFile(base+".files.jsonl", os.O_CREATE|os.O_RDWR|os.O_TRUNC|os.O_APPEND, 0o644)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("fleet catalog: %w", err)
	}
	l.f, l.lists = f, lists
	return l, nil
}

// find returns the position of id in l.rows and whether it is there.
func (l *lifeView) find(id string) (int, bool) {
	if num, ok := episodes.ParseEpisodeID(id); ok {
		i := sort.Search(len(l.rows), func(i int) bool { return l.rows[i].num >= num })
		return i, i < len(l.rows) && l.rows[i].num == num
	}
	for i, r := range l.rows {
		if r.num >= 0 {
			break
		}
		if l.oddIDs[-r.num-1] == id {
			return i, true
		}
	}
	return 0, false
}

// id is the episode id of row r.
func (l *lifeView) id(r rowRef) string {
	if r.num < 0 {
		return l.oddIDs[-r.num-1]
	}
	return episodes.EpisodeID(r.num)
}

// add records a shipped row; a row already present is ignored. It reports
// whether the row was new; an error is a local file that could not be
// written (the row is then not added, and the follower retries).
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
		var err error
		if l, err = c.newLifeView(agent, life); err != nil {
			return false, err
		}
		a.lives[life] = l
	}
	if _, ok := l.find(id); ok {
		return false, nil
	}
	ref := rowRef{files: l.listsN}
	if num, ok := episodes.ParseEpisodeID(id); ok {
		ref.num = num
	} else {
		ref.num = -int64(len(l.oddIDs)) - 1
	}
	list, err := json.Marshal(fileList{ID: id, Files: files})
	if err != nil {
		return false, fmt.Errorf("fleet catalog: %w", err)
	}
	list = append(list, '\n')
	if _, err := l.lists.Write(list); err != nil {
		l.lists.Truncate(l.listsN) // a short write leaves a partial line: cut it
		return false, fmt.Errorf("fleet catalog: %w", err)
	}
	line := append(append(make([]byte, 0, len(row)+1), row...), '\n')
	n := len(l.rows)
	// Where the row goes: after every row with a smaller number (odd ids,
	// all negative, go first in arrival order).
	i := sort.Search(n, func(i int) bool { return l.rows[i].num > ref.num })
	if ref.num < 0 {
		i = len(l.oddIDs)
	}
	if i == n {
		if _, err := l.f.Write(line); err != nil {
			// A short write leaves a partial line past size: cut it.
			l.f.Truncate(l.size)
			l.f.Seek(l.size, io.SeekStart)
			l.lists.Truncate(l.listsN)
			return false, fmt.Errorf("fleet catalog: %w", err)
		}
		l.size += int64(len(line))
	} else if err := l.insert(i, line); err != nil {
		// Out of order (rows committed out of seq order).
		l.lists.Truncate(l.listsN)
		return false, err
	}
	l.listsN += int64(len(list))
	if ref.num < 0 {
		l.oddIDs = append(l.oddIDs, id)
	}
	l.rows = slices.Insert(l.rows, i, ref)
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
		return len(a.lives[life].rows)
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

// indexSize is the length of agent's life's index.jsonl (its whole rows).
func (c *catalog) indexSize(agent string, life int) (int64, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if a := c.agents[agent]; a != nil && a.lives[life] != nil {
		return a.lives[life].size, true
	}
	return 0, false
}

// openIndex opens agent's life's index file for reading, with the length
// of its whole rows: opened under the lock, so no rewrite comes between
// (a later one replaces the file, not what was opened).
func (c *catalog) openIndex(agent string, life int) (*os.File, int64, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	a := c.agents[agent]
	if a == nil || a.lives[life] == nil {
		return nil, 0, false
	}
	l := a.lives[life]
	f, err := os.Open(l.path)
	if err != nil {
		return nil, 0, false
	}
	return f, l.size, true
}

// indexBytes is agent's life's index.jsonl, read from its file.
func (c *catalog) indexBytes(agent string, life int) ([]byte, bool) {
	f, size, ok := c.openIndex(agent, life)
	if !ok {
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
	l := a.lives[life]
	out := make([]string, len(l.rows))
	for i, r := range l.rows {
		out[i] = l.id(r)
	}
	return out
}

// lastID is the id of agent's life's last row in id order ("" when none).
func (c *catalog) lastID(agent string, life int) string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	a := c.agents[agent]
	if a == nil || a.lives[life] == nil || len(a.lives[life].rows) == 0 {
		return ""
	}
	l := a.lives[life]
	return l.id(l.rows[len(l.rows)-1])
}

// has reports whether agent's life has a row for id.
func (c *catalog) has(agent string, life int, id string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	a := c.agents[agent]
	if a == nil || a.lives[life] == nil {
		return false
	}
	_, ok := a.lives[life].find(id)
	return ok
}

// episode returns a shipped episode's file list, read from disk; nil when
// there is no such row, or (logged) when its line cannot be read.
func (c *catalog) episode(agent string, life int, id string) *episodeView {
	c.mu.RLock()
	a := c.agents[agent]
	if a == nil || a.lives[life] == nil {
		c.mu.RUnlock()
		return nil
	}
	l := a.lives[life]
	i, ok := l.find(id)
	if !ok {
		c.mu.RUnlock()
		return nil
	}
	// Complete lines are never rewritten, so reading after the unlock is safe.
	lists, off, end := l.lists, l.rows[i].files, l.listsN
	c.mu.RUnlock()
	var fl fileList
	err := readLine(lists, off, end, &fl)
	if err == nil && fl.ID != id {
		err = fmt.Errorf("file list at %d is %s's", off, fl.ID)
	}
	if err != nil {
		slog.Warn("fleet: an episode's file list could not be read", "agent", agent, "life", life, "id", id, "err", err)
		return nil
	}
	return &episodeView{files: fl.Files}
}

// readLine decodes the JSON line of f at off (lines end before end).
func readLine(f *os.File, off, end int64, v any) error {
	buf := make([]byte, min(int64(1024), end-off))
	for {
		n, err := f.ReadAt(buf, off)
		if err != nil && n < len(buf) {
			return err
		}
		if j := bytes.IndexByte(buf[:n], '\n'); j >= 0 {
			return json.Unmarshal(buf[:j], v)
		}
		if off+int64(len(buf)) >= end {
			return fmt.Errorf("file list at %d has no end", off)
		}
		buf = make([]byte, min(2*int64(len(buf)), end-off))
	}
}
