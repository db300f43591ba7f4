package fs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mfm-project/mfm/episodes"
)

// q/<query>/ — cue queries as directories, answered by Hooks.Querier.
//
// Looking up q/<query> runs the query: a malformed one fails the lookup
// with EINVAL (message and grammar in /.errors), so it never shows up as
// an empty directory. Every q/ node has entry and attribute timeouts of 0
// and every lookup, listing and open asks the query cache, whose entries
// are valid only while index.jsonl is unchanged (inode, size, mtime) and
// for at most queryCacheTTL: results follow index.jsonl as it grows.

const (
	// queryCacheTTL bounds how long one query result is reused while
	// index.jsonl does not change (one `ls -l` looks every entry up).
	queryCacheTTL = time.Second
	// queryCacheMax bounds the number of cached query results.
	queryCacheMax = 256
	// SheetMaxTiles is how many matches q/<query>/sheet.png shows: the
	// last SheetMaxTiles in chronological order.
	SheetMaxTiles = 64
)

// Names inside q/<query>/ besides the per-match links.
const (
	queryResultsName = "results.jsonl"
	queryCountName   = "count"
	querySheetName   = "sheet.png"
	queryReadmeName  = "README.md"
)

// queryResult is one run of a query.
type queryResult struct {
	rows  [][]byte
	dirs  []string
	names []string          // entry name per row; "" for a duplicate
	links map[string]string // entry name -> symlink target

	sheetMu   sync.Mutex // guards the three below; never held while rendering
	sheetDone bool
	sheet     []byte
	sheetErr  error
}

// indexGen identifies the state of index.jsonl a result was computed at.
type indexGen struct {
	ino, size uint64
	mtime     int64
}

func (m *mfs) indexGen() indexGen {
	var st syscall.Stat_t
	if err := syscall.Stat(m.store.Path(episodes.IndexFileName), &st); err != nil {
		return indexGen{}
	}
	return indexGen{ino: st.Ino, size: uint64(st.Size), mtime: st.Mtim.Nano()}
}

// queryEntry is a cached or in-flight query run.
type queryEntry struct {
	gen  indexGen
	done chan struct{} // closed when res/err are set
	at   time.Time
	res  *queryResult
	err  error
}

// queryCache runs queries for q/ and shares recent results. Its mutex is
// held only around map operations, never while the Querier runs.
type queryCache struct {
	m   *mfs
	mu  sync.Mutex
	ent map[string]*queryEntry
}

func newQueryCache(m *mfs) *queryCache {
	return &queryCache{m: m, ent: map[string]*queryEntry{}}
}

// get returns the result of query, running it if no valid result is
// cached. The Querier runs in its own goroutine under a context with the
// mount's RenderTimeout; get gives up at that deadline (ETIMEDOUT) or
// when the request is interrupted, even if the Querier ignores its
// context, so a stuck index never hangs a FUSE request.
func (c *queryCache) get(ctx context.Context, query string) (*queryResult, error) {
	gen := c.m.indexGen()
	c.mu.Lock()
	e := c.ent[query]
	if e != nil && e.gen == gen {
		select {
		case <-e.done:
			if time.Since(e.at) <= queryCacheTTL {
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
		e = &queryEntry{gen: gen, done: make(chan struct{})}
		if len(c.ent) >= queryCacheMax {
			for k, old := range c.ent {
				select {
				case <-old.done:
					delete(c.ent, k)
				default:
				}
			}
		}
		c.ent[query] = e
		go c.run(query, e)
	}
	c.mu.Unlock()

	timeout := c.m.opt.RenderTimeout
	t := time.NewTimer(timeout + 100*time.Millisecond)
	defer t.Stop()
	select {
	case <-e.done:
		return e.res, e.err
	case <-t.C:
		c.forget(query, e)
		return nil, fmt.Errorf("query %q: no answer within %v: %w", query, timeout, context.DeadlineExceeded)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// forget drops e from the cache if it is still the entry for query, so
// the next access runs the query again.
func (c *queryCache) forget(query string, e *queryEntry) {
	c.mu.Lock()
	if c.ent[query] == e {
		delete(c.ent, query)
	}
	c.mu.Unlock()
}

func (c *queryCache) run(query string, e *queryEntry) {
	ctx, cancel := context.WithTimeout(context.Background(), c.m.opt.RenderTimeout)
	defer cancel()
	var res *queryResult
	rows, dirs, err := c.m.opt.Hooks.Querier.Query(ctx, query)
	switch {
	case err == nil && len(rows) != len(dirs):
		err = fmt.Errorf("query %q: the index returned %d rows but %d directories", query, len(rows), len(dirs))
	case errors.Is(err, context.DeadlineExceeded):
		err = fmt.Errorf("query %q: no answer within %v: %w", query, c.m.opt.RenderTimeout, err)
	case err != nil:
		err = invalid(err)
	default:
		res = newQueryResult(rows, dirs)
	}
	e.res, e.err, e.at = res, err, time.Now()
	close(e.done)
	if errors.Is(err, context.DeadlineExceeded) {
		c.forget(query, e) // a timeout is not an answer: do not cache it
	}
}

func newQueryResult(rows [][]byte, dirs []string) *queryResult {
	r := &queryResult{rows: rows, dirs: dirs, names: make([]string, len(dirs)), links: map[string]string{}}
	for i, d := range dirs {
		name := matchName(d)
		if name == "" || r.links[name] != "" {
			continue
		}
		r.names[i] = name
		r.links[name] = "../../" + path.Clean(d)
	}
	return r
}

// matchName is the entry name of a match in q/<query>/: the episode id
// for the current life ("episodes/ep_000123" -> "ep_000123"), prefixed
// by the life for an earlier one ("previous/life_1/episodes/ep_000004" ->
// "life_1.ep_000004").
func matchName(dir string) string {
	dir = path.Clean(strings.Trim(dir, "/"))
	if dir == "." || strings.HasPrefix(dir, "..") {
		return ""
	}
	var parts []string
	for _, p := range strings.Split(dir, "/") {
		if p != episodes.EpisodesDir && p != episodes.PreviousDir {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ".")
}

// results is results.jsonl: the matching rows verbatim, one per line.
func (r *queryResult) results() []byte {
	var b bytes.Buffer
	for _, row := range r.rows {
		b.Write(bytes.TrimRight(row, "\n"))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// sheetInputs returns the frames (store-relative) and labels of the last
// SheetMaxTiles matches.
func (r *queryResult) sheetInputs() (frames, labels []string) {
	start := max(0, len(r.rows)-SheetMaxTiles)
	for i := start; i < len(r.rows); i++ {
		frames = append(frames, frameOf(r.rows[i], r.dirs[i]))
		label := r.names[i]
		if label == "" {
			label = matchName(r.dirs[i])
		}
		labels = append(labels, label)
	}
	return frames, labels
}

// frameOf is the store-relative frame of an index row whose episode
// directory is dir: the row's image, re-rooted like dir (rows of earlier
// lives are relative to their life), or dir/observation/image.png.
func frameOf(row []byte, dir string) string {
	r, err := episodes.ParseRow(row)
	if err == nil && r.Image != "" {
		img := path.Clean(r.Image)
		if p := path.Clean(r.Path); r.Path != "" && strings.HasPrefix(img, p+"/") {
			return path.Join(dir, strings.TrimPrefix(img, p+"/"))
		}
		if prefix, ok := strings.CutSuffix(path.Clean(dir), path.Clean(r.Path)); ok && r.Path != "" {
			return path.Join(prefix, img)
		}
	}
	return path.Join(dir, "observation", "image.png")
}

// newQueryRoot serves q/: it lists only README.md; any other name is a
// query, run on lookup.
func newQueryRoot(m *mfs) (gofs.InodeEmbedder, error) {
	d := &vdir{m: m, kind: "query"}
	if m.opt.Hooks.Querier == nil {
		return d, nil
	}
	m.ext.qcache = newQueryCache(m)
	readme := &bytesFile{m: m, kind: "query", content: func(context.Context) ([]byte, error) {
		return queryReadme(m.ext.queryHelp(), m.ext.views()), nil
	}}
	d.lookup = func(ctx context.Context, name string) (gofs.InodeEmbedder, uint32, syscall.Errno) {
		if name == queryReadmeName {
			return readme, fuse.S_IFREG, 0
		}
		if _, err := m.ext.qcache.get(ctx, name); err != nil {
			return nil, 0, m.fail(ctx, "/q/"+name, err)
		}
		m.access.record(ctx, "/q/"+name, "query")
		return m.newQueryDir(name), fuse.S_IFDIR, 0
	}
	d.list = func(ctx context.Context) ([]fuse.DirEntry, syscall.Errno) {
		return []fuse.DirEntry{{Name: queryReadmeName, Mode: fuse.S_IFREG, Ino: virtualIno(d.StableAttr().Ino, queryReadmeName)}}, 0
	}
	return d, nil
}

// newQueryDir serves q/<query>/.
func (m *mfs) newQueryDir(query string) *vdir {
	d := &vdir{m: m, kind: "query"}
	get := func(ctx context.Context) (*queryResult, syscall.Errno) {
		r, err := m.ext.qcache.get(ctx, query)
		if err != nil {
			return nil, m.fail(ctx, "/q/"+query, err)
		}
		return r, 0
	}
	file := func(f func(ctx context.Context, r *queryResult) ([]byte, error)) *bytesFile {
		return &bytesFile{m: m, kind: "query", content: func(ctx context.Context) ([]byte, error) {
			r, err := m.ext.qcache.get(ctx, query)
			if err != nil {
				return nil, err
			}
			return f(ctx, r)
		}}
	}
	results := file(func(_ context.Context, r *queryResult) ([]byte, error) { return r.results(), nil })
	count := file(func(_ context.Context, r *queryResult) ([]byte, error) {
		return []byte(strconv.Itoa(len(r.rows)) + "\n"), nil
	})
	sheet := file(func(ctx context.Context, r *queryResult) ([]byte, error) { return m.querySheet(ctx, r) })
	d.lookup = func(ctx context.Context, name string) (gofs.InodeEmbedder, uint32, syscall.Errno) {
		switch name {
		case queryResultsName:
			return results, fuse.S_IFREG, 0
		case queryCountName:
			return count, fuse.S_IFREG, 0
		case querySheetName:
			if m.opt.Hooks.Viewer != nil {
				return sheet, fuse.S_IFREG, 0
			}
		}
		r, errno := get(ctx)
		if errno != 0 {
			return nil, 0, errno
		}
		target, ok := r.links[name]
		if !ok {
			return nil, 0, syscall.ENOENT
		}
		return &linkNode{m: m, target: target}, fuse.S_IFLNK, 0
	}
	d.list = func(ctx context.Context) ([]fuse.DirEntry, syscall.Errno) {
		r, errno := get(ctx)
		if errno != 0 {
			return nil, errno
		}
		ino := d.StableAttr().Ino
		ent := func(name string, mode uint32) fuse.DirEntry {
			return fuse.DirEntry{Name: name, Mode: mode, Ino: virtualIno(ino, name)}
		}
		out := make([]fuse.DirEntry, 0, 3+len(r.rows))
		out = append(out, ent(queryResultsName, fuse.S_IFREG), ent(queryCountName, fuse.S_IFREG))
		if m.opt.Hooks.Viewer != nil {
			out = append(out, ent(querySheetName, fuse.S_IFREG))
		}
		for _, n := range r.names {
			if n != "" {
				out = append(out, ent(n, fuse.S_IFLNK))
			}
		}
		return out, 0
	}
	return d
}

// querySheet renders the contact sheet of a result, once per result
// (a timed-out render is tried again on the next access).
func (m *mfs) querySheet(ctx context.Context, r *queryResult) ([]byte, error) {
	r.sheetMu.Lock()
	if r.sheetDone {
		defer r.sheetMu.Unlock()
		return r.sheet, r.sheetErr
	}
	r.sheetMu.Unlock()
	frames, labels := r.sheetInputs()
	rctx, cancel := context.WithTimeout(ctx, m.opt.RenderTimeout)
	defer cancel()
	b, err := m.opt.Hooks.Viewer.Sheet(rctx, frames, labels)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return nil, err
	}
	if err != nil {
		err = invalid(err)
	}
	r.sheetMu.Lock()
	defer r.sheetMu.Unlock()
	if !r.sheetDone {
		r.sheet, r.sheetErr, r.sheetDone = b, err, true
	}
	return r.sheet, r.sheetErr
}

// queryReadme is q/README.md.
func queryReadme(grammar string, views bool) []byte {
	var b bytes.Buffer
	b.WriteString("# q/ — queries as directories\n\n")
	b.WriteString("Any name under q/ is a query, run when you open it (it is not listed here).\n")
	b.WriteString("Quote it in the shell: all space-separated terms must hold; results are in\n")
	b.WriteString("chronological order and follow index.jsonl as it grows.\n\n")
	b.WriteString("    cat 'q/tag:stuck last:5/count'\n")
	b.WriteString("    jq -r .summary 'q/tag:stuck last:5/results.jsonl'\n")
	b.WriteString("    ls -l 'q/tag:stuck last:5/'\n\n")
	b.WriteString("q/<query>/ holds:\n\n")
	b.WriteString("- results.jsonl: the matching index rows, verbatim, one per line\n")
	b.WriteString("- count: the number of matches\n")
	if views {
		fmt.Fprintf(&b, "- sheet.png: a labelled contact sheet of the frames of the last %d matches\n", SheetMaxTiles)
	}
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
