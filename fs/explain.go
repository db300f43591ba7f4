package fs

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/internal/filestamp"
)

// q/<query>/explain: each term of the query, how many episodes matched
// after it and what it was read as (Hooks.Explain). It is served only
// beside a query that parses (the directory's lookup ran it). One
// explanation is computed per query and state of index.jsonl and reused
// for at most explainTTL (a cat stats and opens the file); each runs in
// its own goroutine under the render timeout, so a slow one fails with
// ETIMEDOUT instead of hanging the request.

// explainTTL bounds how long one explanation is reused.
const explainTTL = time.Second

// explainFile is the explain file of query, nil when Hooks.Explain is unset.
func (q *queryDirs) explainFile(query string) *bytesFile {
	m := q.m
	if m.opt.Hooks.Explain == nil {
		return nil
	}
	q.explainOnce.Do(func() {
		q.explains = &explainCache{index: m.store.Path(episodes.IndexFileName), timeout: m.opt.RenderTimeout, run: m.opt.Hooks.Explain, ent: map[string]*explainEntry{}}
	})
	return &bytesFile{env: m.nodeEnv, kind: "query", content: func(ctx context.Context) ([]byte, error) {
		if _, err := q.cache.Get(ctx, query); err != nil {
			return nil, err
		}
		return q.explains.get(ctx, query)
	}}
}

// explainCache shares recent explanations, like content.QueryCache does
// query results: valid while index.jsonl is unchanged, for explainTTL.
type explainCache struct {
	index   string
	timeout time.Duration
	run     func(ctx context.Context, query string) ([]byte, error)

	mu  sync.Mutex
	ent map[string]*explainEntry
}

type explainEntry struct {
	gen  filestamp.Stamp // of index.jsonl
	at   time.Time
	done chan struct{}
	data []byte
	err  error
}

// get returns the explanation of query, computing it unless a valid one
// is cached or in flight; it gives up after the timeout or when ctx ends.
func (c *explainCache) get(ctx context.Context, query string) ([]byte, error) {
	gen := filestamp.Path(c.index)
	c.mu.Lock()
	e := c.ent[query]
	if e != nil {
		select {
		case <-e.done:
			if e.gen != gen || time.Since(e.at) > explainTTL || e.err != nil {
				e = nil
			}
		default:
			if e.gen != gen {
				e = nil
			}
		}
	}
	if e == nil {
		if len(c.ent) >= 64 {
			for k, old := range c.ent {
				select {
				case <-old.done:
					delete(c.ent, k)
				default:
				}
			}
		}
		e = &explainEntry{gen: gen, done: make(chan struct{})}
		c.ent[query] = e
		go func() {
			rctx, cancel := context.WithTimeout(context.Background(), c.timeout)
			defer cancel()
			e.data, e.err = c.run(rctx, query)
			e.at = time.Now()
			close(e.done)
		}()
	}
	c.mu.Unlock()
	t := time.NewTimer(c.timeout + 100*time.Millisecond)
	defer t.Stop()
	select {
	case <-e.done:
		return e.data, e.err
	case <-t.C:
		return nil, fmt.Errorf("explain %q: no answer within %v: %w", query, c.timeout, context.DeadlineExceeded)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
