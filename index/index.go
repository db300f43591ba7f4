// Package index answers cue queries (package index/query) over a store's
// index rows in every life. A Searcher finds the matching rows: Scan reads
// index.jsonl linearly, the bleve index (Open) answers from a derived,
// disposable index under store/.mfm/. Live is the searcher of a
// long-running process: Scan until the index is open, then the index,
// kept up to date; OpenOrScan the one of a one-shot command. Run adds what
// no searcher knows — in:mine's citations (consolidate.Resolver.InMine) —
// and Querier adapts it all to the mount's fs.Querier (builtin types
// only; this package does not import fs).
package index

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/index/query"
)

// Hit is one matching row.
type Hit struct {
	Life int    // the row's life number
	Row  []byte // the row exactly as in its life's index.jsonl (no newline)
	// Dir is the episode directory relative to the store root
	// ("episodes/ep_000123", "previous/life_1/episodes/ep_000004").
	Dir string
}

// A Searcher finds the rows matching a query: every row-level term
// (query.Query.Match), the query's lives and last:N, in chronological
// order (earlier lives first, then file order). It ignores in:mine; Run
// applies it.
type Searcher interface {
	Search(ctx context.Context, q *query.Query) ([]Hit, error)
}

// Cite is one citation of an episode in mine/.
type Cite struct {
	Dir  string // the cited episode directory, as in Hit.Dir
	File string // the citing file, relative to the store root
	Line string // the citing paragraph or list item's text (consolidate.Blocks)
}

// CiteFunc lists the citations in mine/ (consolidate.Resolver.InMine).
type CiteFunc func(ctx context.Context) ([]Cite, error)

// Run answers q with s, applying in:mine through cites: only episodes
// cited by a mine/ paragraph or list item containing q's words are kept, then last:N.
func Run(ctx context.Context, s Searcher, q *query.Query, cites CiteFunc) ([]Hit, error) {
	if !q.InMine {
		return s.Search(ctx, q)
	}
	if cites == nil {
		return nil, errors.New("query: in:mine is not available here (no citation source)")
	}
	inner := *q
	inner.Last = 0
	hits, err := s.Search(ctx, &inner)
	if err != nil {
		return nil, err
	}
	cs, err := cites(ctx)
	if err != nil {
		return nil, fmt.Errorf("in:mine: %w", err)
	}
	cited := map[string]bool{}
	for _, c := range cs {
		if query.ContainsWords(q.Words, []string{c.Line}) {
			cited[path.Clean(c.Dir)] = true
		}
	}
	out := hits[:0]
	for _, h := range hits {
		if cited[path.Clean(h.Dir)] {
			out = append(out, h)
		}
	}
	return lastN(out, q.Last), nil
}

func lastN(h []Hit, n int) []Hit {
	if n > 0 && len(h) > n {
		return h[len(h)-n:]
	}
	return h
}

// Scan is the Searcher that reads every wanted life's index.jsonl.
// Malformed lines are skipped (fsck reports them).
type Scan struct{ Store *episodes.Store }

// Search implements Searcher.
func (s Scan) Search(ctx context.Context, q *query.Query) ([]Hit, error) {
	lives, err := s.Store.Lives()
	if err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	current := lives[len(lives)-1].N
	var hits []Hit
	for _, l := range lives {
		if !q.WantsLife(l.N, current) {
			continue
		}
		prefix, err := LifePrefix(s.Store, l)
		if err != nil {
			return nil, err
		}
		_, err = episodes.ReadRows(l.IndexPath(), 0, func(r episodes.Row, _ episodes.Line) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			if q.Match(&r) {
				hits = append(hits, Hit{Life: l.N, Row: append([]byte(nil), r.Raw...), Dir: EpisodeDir(prefix, &r)})
			}
			return nil
		}, nil)
		if err != nil {
			return nil, fmt.Errorf("query: life %d: %w", l.N, err)
		}
	}
	return lastN(hits, q.Last), nil
}

// LifePrefix is the slash path of life l's root relative to the store
// root ("" for the current life, "previous/life_1").
func LifePrefix(s *episodes.Store, l episodes.Life) (string, error) {
	rel, err := filepath.Rel(s.Root, l.Root)
	if err != nil {
		return "", fmt.Errorf("query: life %d: %w", l.N, err)
	}
	rel = filepath.ToSlash(rel)
	if rel == "." {
		rel = ""
	}
	return rel, nil
}

// EpisodeDir is row r's episode directory relative to the store root,
// for a row of the life at prefix (LifePrefix).
func EpisodeDir(prefix string, r *episodes.Row) string {
	p := r.Path
	if p == "" {
		p = episodes.EpisodesDir + "/" + r.ID
	}
	return path.Join(prefix, path.Clean(p))
}

// Querier answers the mount's q/<query>/ (it satisfies fs.Querier).
type Querier struct {
	Searcher Searcher
	Cites    CiteFunc // for in:mine; nil disables it
}

// Query parses and runs query; rows are verbatim, dirs[i] is rows[i]'s
// episode directory.
func (qr *Querier) Query(ctx context.Context, s string) (rows [][]byte, dirs []string, err error) {
	q, err := query.Parse(s)
	if err != nil {
		return nil, nil, err
	}
	hits, err := Run(ctx, qr.Searcher, q, qr.Cites)
	if err != nil {
		return nil, nil, err
	}
	rows = make([][]byte, len(hits))
	dirs = make([]string, len(hits))
	for i, h := range hits {
		rows[i], dirs[i] = h.Row, h.Dir
	}
	return rows, dirs, nil
}

// Grammar is the query language's help text.
func (qr *Querier) Grammar() string { return query.Grammar() }
