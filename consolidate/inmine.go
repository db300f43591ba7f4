package consolidate

import (
	"bytes"
	"context"
	"log/slog"
	"os"

	"github.com/mfm-project/mfm/index"
)

// InMine is the citation source of index's in:mine term: every citation
// in mine/ that names an existing episode, with the whole text of the
// line citing it, read at each call (a citation to a missing episode, or
// in a file that changed under the read, is left out; the next query
// sees it).
func (rs *Resolver) InMine() index.CiteFunc {
	return func(ctx context.Context) ([]index.Cite, error) {
		cs, err := rs.Citations()
		if err != nil {
			return nil, err
		}
		lines := map[string][][]byte{} // by citing file
		var out []index.Cite
		for _, r := range cs {
			if r.Dir == "" {
				continue // cites an episode that does not exist
			}
			ls, ok := lines[r.File]
			if !ok {
				b, err := os.ReadFile(rs.Store.Path(r.File))
				if err != nil {
					continue
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

// Preload reads every life's index in the background, so that the first
// cited-by or in:mine answer need not wait for it (on a large store that
// takes seconds); later calls read only what was appended. A failure is
// logged, and reported again by the call that meets it.
func (rs *Resolver) Preload() {
	go func() {
		if _, err := rs.Citations(); err != nil {
			slog.Warn("citations: reading the indexes", slog.Any("err", err))
		}
	}()
}
