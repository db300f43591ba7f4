package content

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"syscall"

	"github.com/mfm-project/mfm/episodes"
)

// Stats are the live counts the generated README.md reports.
type Stats struct {
	Episodes     int            // index rows of the current life
	First, Last  *episodes.Row  // first and last index rows (nil when empty)
	Recent       []episodes.Row // up to the last 200 rows, oldest first
	Lives        int            // lives including the current one
	Previous     []LifeStats    // previous lives, by number
	GridRows     int            // rows of grid.jsonl
	GridCells    int            // distinct cells in grid.jsonl
	GridKinds    map[string]int // rows per kind
	LogLines     int            // lines of logs.txt
	FrameExample string         // store-relative path of an existing frame, if any
	NowState     bool           // now/state.json exists
	NowFrame     bool           // now/frame.png exists
}

// LifeStats counts one previous life.
type LifeStats struct {
	N        int
	Episodes int
}

// StatsCache keeps running counts so each README render reads only what
// was appended since the last one. It is reset when a file is replaced
// (a new life) or shrinks. Its methods are safe for concurrent use.
type StatsCache struct {
	store *episodes.Store
	mu    sync.Mutex

	index, grid, log lineCounter
	cells            map[string]struct{}
	kinds            map[string]int
	first            *episodes.Row
	prevRows         map[int]int
}

// lineCounter counts complete lines of one growing file.
type lineCounter struct {
	ino   uint64
	off   int64
	lines int
}

// NewStatsCache returns a cache of the statistics of store s.
func NewStatsCache(s *episodes.Store) *StatsCache {
	c := &StatsCache{store: s}
	c.Invalidate()
	return c
}

// Invalidate forgets all counts; the next Get recounts.
func (c *StatsCache) Invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.index, c.grid, c.log = lineCounter{}, lineCounter{}, lineCounter{}
	c.cells = map[string]struct{}{}
	c.kinds = map[string]int{}
	c.first = nil
	if c.prevRows == nil {
		c.prevRows = map[int]int{}
	}
}

// Get returns the current statistics.
func (c *StatsCache) Get() (Stats, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.store
	var st Stats
	if err := c.advance(&c.index, s.Path(episodes.IndexFileName), nil); err != nil {
		return st, err
	}
	grew := func(line []byte) {
		if k := cellKey(line); k != "" {
			c.cells[k] = struct{}{}
		}
		if k := jsonStringField(line, "kind"); k != "" {
			c.kinds[k]++
		}
	}
	if err := c.advance(&c.grid, s.Path(episodes.GridFileName), grew); err != nil {
		return st, err
	}
	if err := c.advance(&c.log, s.Path(episodes.LogFileName), nil); err != nil {
		return st, err
	}
	st.Episodes, st.GridRows, st.LogLines = c.index.lines, c.grid.lines, c.log.lines
	st.GridCells = len(c.cells)
	st.GridKinds = make(map[string]int, len(c.kinds))
	for k, v := range c.kinds {
		st.GridKinds[k] = v
	}
	if c.first == nil && c.index.lines > 0 {
		_, _ = episodes.ReadRows(s.Path(episodes.IndexFileName), 0, func(r episodes.Row, _ episodes.Line) error {
			c.first = &r
			return errStop
		}, nil)
	}
	st.First = c.first
	recent, err := episodes.TailRows(s.Path(episodes.IndexFileName), c.index.off, 200)
	if err != nil {
		return st, err
	}
	st.Recent = recent
	if len(recent) > 0 {
		st.Last = &recent[len(recent)-1]
	}
	for i := len(recent) - 1; i >= 0 && st.FrameExample == ""; i-- {
		if recent[i].Image != "" {
			if _, err := os.Stat(s.Path(recent[i].Image)); err == nil {
				st.FrameExample = recent[i].Image
			}
		}
	}
	prev, err := s.PreviousLives()
	if err != nil {
		return st, err
	}
	for _, l := range prev {
		n, ok := c.prevRows[l.N]
		if !ok {
			var lc lineCounter
			if err := c.advance(&lc, l.IndexPath(), nil); err != nil {
				return st, err
			}
			n = lc.lines
			c.prevRows[l.N] = n
		}
		st.Previous = append(st.Previous, LifeStats{N: l.N, Episodes: n})
	}
	sort.Slice(st.Previous, func(i, j int) bool { return st.Previous[i].N < st.Previous[j].N })
	st.Lives = len(prev) + 1
	_, err1 := os.Stat(s.Path(episodes.NowDir, "state.json"))
	_, err2 := os.Stat(s.Path(episodes.NowDir, "frame.png"))
	st.NowState, st.NowFrame = err1 == nil, err2 == nil
	return st, nil
}

var errStop = errors.New("stop")

// advance counts the complete lines appended to path since lc's offset,
// calling each (if not nil) on every new non-empty line. A replaced or
// shrunk file is counted again from the start.
func (c *StatsCache) advance(lc *lineCounter, path string, each func([]byte)) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		*lc = lineCounter{}
		return nil
	}
	if err != nil {
		return fmt.Errorf("count %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("count %s: %w", path, err)
	}
	ino := fi.Sys().(*syscall.Stat_t).Ino
	if ino != lc.ino || fi.Size() < lc.off {
		if lc.ino != 0 && each != nil {
			// The grid was replaced: its derived sets start over.
			clear(c.cells)
			clear(c.kinds)
		}
		*lc = lineCounter{ino: ino}
	}
	if fi.Size() == lc.off {
		return nil
	}
	if each != nil {
		end, err := episodes.ScanFile(path, lc.off, func(l episodes.Line) error {
			if len(bytes.TrimSpace(l.Data)) > 0 {
				lc.lines++
				each(l.Data)
			}
			return nil
		})
		lc.off = end
		return err
	}
	if _, err := f.Seek(lc.off, io.SeekStart); err != nil {
		return err
	}
	buf := make([]byte, 1<<20)
	off := lc.off
	lastNL := lc.off
	for {
		n, err := f.Read(buf)
		if n > 0 {
			chunk := buf[:n]
			if k := bytes.Count(chunk, []byte{'\n'}); k > 0 {
				lc.lines += k
				lastNL = off + int64(bytes.LastIndexByte(chunk, '\n')) + 1
			}
			off += int64(n)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("count %s: %w", path, err)
		}
	}
	lc.off = lastNL
	return nil
}

// cellKey extracts the "cell": [x, y, z] array of a grid row as a string
// key without decoding the whole row.
func cellKey(line []byte) string {
	i := bytes.Index(line, []byte(`"cell"`))
	if i < 0 {
		return ""
	}
	rest := line[i:]
	a := bytes.IndexByte(rest, '[')
	b := bytes.IndexByte(rest, ']')
	if a < 0 || b < a {
		return ""
	}
	return string(bytes.ReplaceAll(rest[a+1:b], []byte(" "), nil))
}

// jsonStringField extracts a top-level string field "name": "value"
// (without escapes) from a JSON object line; "" if absent.
func jsonStringField(line []byte, name string) string {
	key := []byte(`"` + name + `"`)
	i := bytes.Index(line, key)
	if i < 0 {
		return ""
	}
	rest := bytes.TrimLeft(line[i+len(key):], " ")
	if len(rest) == 0 || rest[0] != ':' {
		return ""
	}
	rest = bytes.TrimLeft(rest[1:], " ")
	if len(rest) == 0 || rest[0] != '"' {
		return ""
	}
	j := bytes.IndexByte(rest[1:], '"')
	if j < 0 {
		return ""
	}
	return string(rest[1 : 1+j])
}
