package fs

import (
	"context"
	"sync"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/fs/content"
)

// q/<query>/ — cue queries as directories, answered by Hooks.Querier
// through a content.QueryCache.
//
// Looking up q/<query> runs the query: a malformed one fails the lookup
// with EINVAL (message and grammar in /.errors), so it never shows up as
// an empty directory. Every q/ node has entry and attribute timeouts of 0
// and every lookup, listing and open asks the query cache, whose results
// follow index.jsonl as it grows.

// newQueryRoot serves q/: it lists only README.md; any other name is a
// query, run on lookup.
func newQueryRoot(m *mfs) (gofs.InodeEmbedder, error) {
	d := &vdir{env: m.nodeEnv, kind: "query"}
	h := m.opt.Hooks
	if h.Querier == nil {
		return d, nil
	}
	q := &queryDirs{m: m, cache: content.NewQueryCache(m.store.Path(episodes.IndexFileName), m.opt.RenderTimeout, h.Querier.Query)}
	m.queries = q.cache
	readme := &bytesFile{env: m.nodeEnv, kind: "query", content: func(context.Context) ([]byte, error) {
		return content.QueryReadme(grammar(h.Querier), h.Viewer != nil), nil
	}}
	d.lookup = func(ctx context.Context, name string) (gofs.InodeEmbedder, uint32, syscall.Errno) {
		if name == content.QueryReadmeName {
			return readme, fuse.S_IFREG, 0
		}
		if err := content.CheckQueryName(name); err != nil {
			return nil, 0, m.fail(ctx, "/q/"+name, err)
		}
		if _, err := q.cache.Get(ctx, name); err != nil {
			return nil, 0, m.fail(ctx, "/q/"+name, err)
		}
		m.access.record(ctx, "/q/"+name, "query")
		return q.dir(name), fuse.S_IFDIR, 0
	}
	d.list = func(ctx context.Context) ([]fuse.DirEntry, syscall.Errno) {
		return []fuse.DirEntry{{Name: content.QueryReadmeName, Mode: fuse.S_IFREG, Ino: virtualIno(d.StableAttr().Ino, content.QueryReadmeName)}}, 0
	}
	return d, nil
}

// queryDirs makes the q/<query>/ directories, all answered from one
// cache.
type queryDirs struct {
	m     *mfs
	cache *content.QueryCache

	explainOnce sync.Once
	explains    *explainCache // explain files (explain.go)
}

// dir serves q/<query>/.
func (q *queryDirs) dir(query string) *vdir {
	m := q.m
	viewer := m.opt.Hooks.Viewer
	d := &vdir{env: m.nodeEnv, kind: "query"}
	get := func(ctx context.Context) (*content.QueryResult, syscall.Errno) {
		r, err := q.cache.Get(ctx, query)
		if err != nil {
			return nil, m.fail(ctx, "/q/"+query, err)
		}
		return r, 0
	}
	file := func(f func(ctx context.Context, r *content.QueryResult) ([]byte, error)) *bytesFile {
		return &bytesFile{env: m.nodeEnv, kind: "query", content: func(ctx context.Context) ([]byte, error) {
			r, err := q.cache.Get(ctx, query)
			if err != nil {
				return nil, err
			}
			return f(ctx, r)
		}}
	}
	results := file(func(_ context.Context, r *content.QueryResult) ([]byte, error) { return r.Results(), nil })
	count := file(func(_ context.Context, r *content.QueryResult) ([]byte, error) { return r.Count(), nil })
	sheet := file(func(ctx context.Context, r *content.QueryResult) ([]byte, error) {
		return r.Sheet(ctx, m.opt.RenderTimeout, viewer.Sheet)
	})
	d.lookup = func(ctx context.Context, name string) (gofs.InodeEmbedder, uint32, syscall.Errno) {
		switch name {
		case content.QueryResultsName:
			return results, fuse.S_IFREG, 0
		case content.QueryCountName:
			return count, fuse.S_IFREG, 0
		case content.QuerySheetName:
			if viewer != nil {
				return sheet, fuse.S_IFREG, 0
			}
		case content.QueryExplainName:
			if explain := q.explainFile(query); explain != nil {
				return explain, fuse.S_IFREG, 0
			}
		}
		r, errno := get(ctx)
		if errno != 0 {
			return nil, 0, errno
		}
		target, ok := r.Link(name)
		if !ok {
			return nil, 0, syscall.ENOENT
		}
		return &linkNode{env: m.nodeEnv, target: target}, fuse.S_IFLNK, 0
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
		links := r.Links()
		out := make([]fuse.DirEntry, 0, 4+len(links))
		out = append(out, ent(content.QueryResultsName, fuse.S_IFREG), ent(content.QueryCountName, fuse.S_IFREG))
		if viewer != nil {
			out = append(out, ent(content.QuerySheetName, fuse.S_IFREG))
		}
		if m.opt.Hooks.Explain != nil {
			out = append(out, ent(content.QueryExplainName, fuse.S_IFREG))
		}
		for _, n := range links {
			out = append(out, ent(n, fuse.S_IFLNK))
		}
		return out, 0
	}
	return d
}
