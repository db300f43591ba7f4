package content

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/internal/filestamp"
)

// q/<query>/ — cue queries as directories. This file holds what the
// directories contain (QueryResult) and the cache of query runs
// (QueryCache); the mount's q/ nodes serve them.

const (
	// queryCacheTTL bounds how long one query result is reused while
	// index.jsonl does not change (one `ls -l` looks every entry up).
	queryCacheTTL = time.Second
	// queryCacheMax bounds the number of cached query results.
	queryCacheMax = 256
	// QueryCacheBytes bounds the bytes of the query results a QueryCache
	// keeps (rows, entry names, links, a rendered sheet): past it the
	// least recently used are dropped, and a result over a quarter of it
	// is answered but not kept.
	QueryCacheBytes = 32 << 20
	// SheetMaxTiles is how many matches q/<query>/sheet.png shows: the
	// last SheetMaxTiles in chronological order.
	SheetMaxTiles = 64
)

// Names inside q/<query>/ besides the per-match links, and q/'s own
// README.
const (
	QueryResultsName = "results.jsonl"
	QueryCountName   = "count"
	QuerySheetName   = "sheet.png"
	QueryReadmeName  = "README.md"
)

// QueryResult is one run of a query: the content of q/<query>/.
type QueryResult struct {
	rows  [][]byte
	dirs  []string
	names []string          // entry name per row; "" for a duplicate
	links map[string]string // entry name -> symlink target

	size int64 // bytes held by the fields above (resultSize)

	sheetMu   sync.Mutex // guards the three below; never held while rendering
	sheetDone bool
	sheet     []byte
	sheetErr  error
}

// newQueryResult makes the result of a query from the Querier's rows and
// their episode directories (dirs[i] is the directory of rows[i]).
func newQueryResult(rows [][]byte, dirs []string) *QueryResult {
	r := &QueryResult{rows: rows, dirs: dirs, names: make([]string, len(dirs)), links: map[string]string{}}
	for i, d := range dirs {
		name := episodes.MatchName(d)
		if name == "" || r.links[name] != "" {
			continue
		}
		r.names[i] = name
		r.links[name] = "../../" + path.Clean(d)
	}
	r.size = resultSize(r)
	return r
}

// resultSize estimates the bytes a result's rows, directories, names
// and links take, with their slice and map overheads.
func resultSize(r *QueryResult) int64 {
	n := int64(256)
	for i := range r.rows {
		n += int64(len(r.rows[i])+len(r.dirs[i])+len(r.names[i])) + 3*24
	}
	for k, v := range r.links {
		n += int64(len(k)+len(v)) + 64
	}
	return n
}

// bytes is what the result holds, with its sheet once rendered.
func (r *QueryResult) bytes() int64 {
	r.sheetMu.Lock()
	defer r.sheetMu.Unlock()
	return r.size + int64(len(r.sheet))
}

// Results is results.jsonl: the matching rows verbatim, one per line.
func (r *QueryResult) Results() []byte {
	var b bytes.Buffer
	for _, row := range r.rows {
		b.Write(bytes.TrimRight(row, "\n"))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// Count is the count file: the number of matches and a newline.
func (r *QueryResult) Count() []byte { return []byte(strconv.Itoa(len(r.rows)) + "\n") }

// Links are the names of the per-match symlinks, in chronological order
// (a match whose name an earlier one took has none).
func (r *QueryResult) Links() []string {
	out := make([]string, 0, len(r.names))
	for _, n := range r.names {
		if n != "" {
			out = append(out, n)
		}
	}
	return out
}

// Link returns the target of the symlink name ("../../episodes/ep_000123").
func (r *QueryResult) Link(name string) (string, bool) {
	t, ok := r.links[name]
	return t, ok
}

// sheetInputs returns the frames (store-relative) and labels of the last
// SheetMaxTiles matches.
func (r *QueryResult) sheetInputs() (frames, labels []string) {
	start := max(0, len(r.rows)-SheetMaxTiles)
	for i := start; i < len(r.rows); i++ {
		frames = append(frames, episodes.FrameOf(r.rows[i], r.dirs[i]))
		label := r.names[i]
		if label == "" {
			label = episodes.MatchName(r.dirs[i])
		}
		labels = append(labels, label)
	}
	return frames, labels
}

// Sheet renders the contact sheet of the result with render (the mount's
// Viewer.Sheet) under timeout, once per result: a failed render is kept
// (as an Invalid error) like a good one, a timed-out or cancelled one is
// tried again on the next call.
func (r *QueryResult) Sheet(ctx context.Context, timeout time.Duration, render func(ctx context.Context, frames, labels []string) ([]byte, error)) ([]byte, error) {
	r.sheetMu.Lock()
	if r.sheetDone {
		defer r.sheetMu.Unlock()
		return r.sheet, r.sheetErr
	}
	r.sheetMu.Unlock()
	frames, labels := r.sheetInputs()
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	b, err := render(rctx, frames, labels)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return nil, err
	}
	if err != nil {
		err = Invalid(err)
	}
	r.sheetMu.Lock()
	defer r.sheetMu.Unlock()
	if !r.sheetDone {
		r.sheet, r.sheetErr, r.sheetDone = b, err, true
	}
	return r.sheet, r.sheetErr
}

// QueryFunc runs one query: the matching index rows and their episode
// directories, as Querier.Query of package fs returns them.
type QueryFunc func(ctx context.Context, query string) (rows [][]byte, dirs []string, err error)

// QueryCache runs queries and shares recent results. A result is valid
// only while the index file is unchanged (inode, size, mtime) and for at
// most queryCacheTTL, so results follow index.jsonl as it grows. It
// keeps at most queryCacheMax results and QueryCacheBytes of them
// (trim). Its mutex is held only around map operations, never while a
// query runs.
type QueryCache struct {
	index   string // the index file whose state a result belongs to
	timeout time.Duration
	run     QueryFunc

	maxBytes int64

	mu  sync.Mutex
	ent map[string]*queryEntry
}

// NewQueryCache returns a cache of the queries run answers, each under
// timeout, valid while the file index (index.jsonl) is unchanged.
func NewQueryCache(index string, timeout time.Duration, run QueryFunc) *QueryCache {
	return &QueryCache{index: index, timeout: timeout, run: run, maxBytes: QueryCacheBytes, ent: map[string]*queryEntry{}}
}

// Held returns the number of results the cache keeps and their bytes.
func (c *QueryCache) Held() (n int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.ent {
		if r := e.doneResult(); r != nil {
			n++
			bytes += r.bytes()
		}
	}
	return n, bytes
}

// doneResult is e's result if its run is over, else nil.
func (e *queryEntry) doneResult() *QueryResult {
	select {
	case <-e.done:
		return e.res
	default:
		return nil
	}
}

// trimLocked drops finished runs that are past queryCacheTTL (no Get
// uses them again), then the least recently used results until at most
// queryCacheMax entries and maxBytes of results are kept; a result over
// a quarter of maxBytes is never kept. Runs in flight stay (their
// callers wait on them). c.mu is held.
func (c *QueryCache) trimLocked() {
	type held struct {
		query string
		used  time.Time
		bytes int64
	}
	var done []held
	var total int64
	for q, e := range c.ent {
		select {
		case <-e.done:
		default:
			continue
		}
		var n int64
		if e.res != nil {
			n = e.res.bytes()
		}
		if time.Since(e.at) > queryCacheTTL || n > c.maxBytes/4 {
			delete(c.ent, q)
			continue
		}
		done = append(done, held{q, e.used, n})
		total += n
	}
	if total <= c.maxBytes && len(c.ent) <= queryCacheMax {
		return
	}
	slices.SortFunc(done, func(a, b held) int { return a.used.Compare(b.used) })
	for _, h := range done {
		if total <= c.maxBytes && len(c.ent) <= queryCacheMax {
			break
		}
		delete(c.ent, h.query)
		total -= h.bytes
	}
}

// queryEntry is a cached or in-flight query run.
type queryEntry struct {
	gen  filestamp.Stamp // of index.jsonl when the result was computed
	done chan struct{}   // closed when res/err are set
	at   time.Time
	res  *QueryResult
	err  error
	used time.Time // last Get that returned it; guarded by QueryCache.mu
}

// Get returns the result of query, running it if no valid result is
// cached. The query runs in its own goroutine under a context with the
// cache's timeout; Get gives up at that deadline (an error wrapping
// context.DeadlineExceeded) or when ctx is done, even if the query
// ignores its context, so a stuck index never hangs a request. A
// malformed query's error is Invalid.
func (c *QueryCache) Get(ctx context.Context, query string) (*QueryResult, error) {
	gen := filestamp.Path(c.index)
	c.mu.Lock()
	e := c.ent[query]
	if e != nil && e.gen == gen {
		select {
		case <-e.done:
			if time.Since(e.at) <= queryCacheTTL {
				e.used = time.Now()
				c.trimLocked() // a sheet rendered since adds to the results' bytes
				c.mu.Unlock()
				return e.res, e.err
			}
			e = nil
		default: // in flight at the same generation: wait for it
		}
	} else {
		e = nil
	}
	if e == nil {
		e = &queryEntry{gen: gen, done: make(chan struct{}), used: time.Now()}
		c.ent[query] = e
		c.trimLocked()
		go c.runEntry(query, e)
	}
	c.mu.Unlock()

	t := time.NewTimer(c.timeout + 100*time.Millisecond)
	defer t.Stop()
	select {
	case <-e.done:
		return e.res, e.err
	case <-t.C:
		c.forget(query, e)
		return nil, fmt.Errorf("query %q: no answer within %v: %w", query, c.timeout, context.DeadlineExceeded)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// forget drops e from the cache if it is still the entry for query, so
// the next access runs the query again.
func (c *QueryCache) forget(query string, e *queryEntry) {
	c.mu.Lock()
	if c.ent[query] == e {
		delete(c.ent, query)
	}
	c.mu.Unlock()
}

func (c *QueryCache) runEntry(query string, e *queryEntry) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	var res *QueryResult
	rows, dirs, err := c.run(ctx, query)
	switch {
	case err == nil && len(rows) != len(dirs):
		err = fmt.Errorf("query %q: the index returned %d rows but %d directories", query, len(rows), len(dirs))
	case errors.Is(err, context.DeadlineExceeded):
		err = fmt.Errorf("query %q: no answer within %v: %w", query, c.timeout, err)
	case err != nil:
		err = Invalid(err)
	default:
		res = newQueryResult(rows, dirs)
	}
	e.res, e.err, e.at = res, err, time.Now()
	// Done and trimmed in one step: the cache is never seen over its
	// budget.
	c.mu.Lock()
	close(e.done)
	if errors.Is(err, context.DeadlineExceeded) && c.ent[query] == e {
		delete(c.ent, query) // a timeout is not an answer: do not cache it
	}
	c.trimLocked()
	c.mu.Unlock()
}

// MaxQueryLen is the longest query in bytes, the index's (query.MaxLen
// of package index/query): a q/ name is one path component, and the
// mount refuses a longer one itself, before any Querier sees it.
const MaxQueryLen = 255

// CheckQueryName refuses a q/ name longer than MaxQueryLen with an
// error that fails the lookup with ENAMETOOLONG (FUSE hands the daemon
// names of up to 1024 bytes, recent kernels up to 4095).
func CheckQueryName(name string) error {
	if len(name) > MaxQueryLen {
		return NameTooLong(fmt.Errorf("query: %d bytes, longer than the %d bytes a query may be", len(name), MaxQueryLen))
	}
	return nil
}

// QueryReadme is q/README.md; views says whether sheet.png is served.
func QueryReadme(grammar string, views bool) []byte {
	var b bytes.Buffer
	b.WriteString("# q/ — queries as directories\n\n")
	b.WriteString("Any name under q/ is a query, run when you open it (it is not listed here).\n")
	b.WriteString("Quote it in the shell: all space-separated terms must hold; results are in\n")
	b.WriteString("chronological order and follow index.jsonl as it grows.\n\n")
	b.WriteString("    cat 'q/tag:stuck last:5/count'\n")
	b.WriteString("    jq -r .summary 'q/tag:stuck last:5/results.jsonl'\n")
	b.WriteString("    ls -l 'q/tag:stuck last:5/'\n\n")
	b.WriteString("q/<query>/ holds:\n\n")
	b.WriteString("- results.jsonl: the matching index rows, verbatim, one per line (with agent:, each starts with \"agent\" and \"episode_dir\")\n")
	b.WriteString("- count: the number of matches\n")
	if views {
		fmt.Fprintf(&b, "- sheet.png: a labelled contact sheet of the frames of the last %d matches\n", SheetMaxTiles)
	}
	b.WriteString("- explain: each term in order, how many episodes matched after it and what it was\n")
	b.WriteString("  read as (near: x=-69 y=185 z=22 r=6 → 0); read it when a count surprises you\n")
	b.WriteString("- one symlink per match to its episode directory: ep_000123 -> ../../episodes/ep_000123,\n")
	b.WriteString("  and for an earlier life life_1.ep_000004 -> ../../previous/life_1/episodes/ep_000004\n\n")
	b.WriteString("A malformed query fails with \"Invalid argument\" (EINVAL); /.errors says what was\n")
	b.WriteString("wrong and what is accepted. An empty result is a count of 0. A query is one path\n")
	b.WriteString("component: at most 255 bytes, no \"/\".\n")
	if grammar != "" {
		b.WriteString("\n## Grammar\n\n")
		b.WriteString(strings.TrimRight(grammar, "\n"))
		b.WriteString("\n")
	}
	return b.Bytes()
}
