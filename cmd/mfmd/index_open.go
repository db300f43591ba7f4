package main

import (
	"bytes"
	"context"
	"os"

	"github.com/mfm-project/mfm/consolidate"
	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/index"
)

// openSearcher returns the searcher for store s and a function that
// releases it.
func openSearcher(s *episodes.Store) (index.Searcher, func(), error) {
	return index.Scan{Store: s}, func() {}, nil
}

// mineCites lists mine/'s citations with their lines, for in:mine.
func mineCites(s *episodes.Store) index.CiteFunc {
	return func(ctx context.Context) ([]index.Cite, error) {
		rs, err := consolidate.Citations(s)
		if err != nil {
			return nil, err
		}
		lines := map[string][][]byte{}
		var out []index.Cite
		for _, r := range rs {
			if r.Dir == "" {
				continue // cites an episode that does not exist
			}
			ls, ok := lines[r.File]
			if !ok {
				b, err := os.ReadFile(s.Path(r.File))
				if err != nil {
					continue // changed under us; the next query sees it
				}
				ls = bytes.Split(b, []byte("\n"))
				lines[r.File] = ls
			}
			text := r.Text
			if i := r.Line - 1; i >= 0 && i < len(ls) {
				text = string(ls[i])
			}
			out = append(out, index.Cite{Dir: r.Dir, File: r.File, Line: text})
		}
		return out, ctx.Err()
	}
}
