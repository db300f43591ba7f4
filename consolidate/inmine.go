package consolidate

import (
	"context"
	"log/slog"
	"os"
	"regexp"
	"strings"

	"github.com/mfm-project/mfm/index"
)

// InMine is the citation source of index's in:mine term: every citation
// in mine/ that names an existing episode, with the whole text of the
// paragraph or list item citing it (Blocks), read at each call (a
// citation to a missing episode, or in a file that changed under the
// read, is left out; the next query sees it).
func (rs *Resolver) InMine() index.CiteFunc {
	return func(ctx context.Context) ([]index.Cite, error) {
		cs, err := rs.Citations()
		if err != nil {
			return nil, err
		}
		blocks := map[string][]string{} // by citing file: each line's block
		var out []index.Cite
		for _, r := range cs {
			if len(r.Dirs) == 0 {
				continue // cites an episode that does not exist
			}
			bs, ok := blocks[r.File]
			if !ok {
				b, err := os.ReadFile(rs.Store.Path(r.File))
				if err != nil {
					continue
				}
				bs = Blocks(b)
				blocks[r.File] = bs
			}
			text := r.Text
			if i := r.Line - 1; i >= 0 && i < len(bs) {
				text = bs[i]
			}
			for _, d := range r.Dirs {
				out = append(out, index.Cite{Dir: d, File: r.File, Line: text})
			}
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

// listItem matches a line that starts a list item: "-", "*" or "+", or a
// number and "." or ")", then a space or the end of the line, after any
// indentation.
var listItem = regexp.MustCompile(`^[ \t]*([-*+]|[0-9]{1,9}[.)])([ \t]|$)`)

// heading matches a Markdown heading line (its leading space trimmed).
var heading = regexp.MustCompile(`^#{1,6}([ \t]|$)`)

// Blocks gives, for each line of text (split at "\n"), the text of the
// paragraph or list item it belongs to (blockSpans), its lines joined by
// "\n", so a note's words and the episodes it cites may stand on
// different lines; a blank line gets "".
func Blocks(text []byte) []string {
	lines := strings.Split(string(text), "\n")
	out := make([]string, len(lines))
	for _, sp := range blockSpans(lines) {
		b := strings.Join(lines[sp[0]:sp[1]], "\n")
		for i := sp[0]; i < sp[1]; i++ {
			out[i] = b
		}
	}
	return out
}

// blockSpans cuts lines into blocks, each the half-open range of its
// lines, in order. A blank line ends a block and belongs to none; a
// heading ("#") is a block of its own; a list item starts at its marker
// and goes on over the following lines (indented or not) up to a blank
// line, a heading or the next item; other lines make paragraphs.
func blockSpans(lines []string) [][2]int {
	var out [][2]int
	start := 0
	flush := func(end int) {
		if start < end {
			out = append(out, [2]int{start, end})
		}
		start = end
	}
	for i, l := range lines {
		switch t := strings.TrimSpace(l); {
		case t == "":
			flush(i)
			start = i + 1
		case heading.MatchString(t):
			flush(i)
			flush(i + 1)
		case listItem.MatchString(l):
			flush(i)
		}
	}
	flush(len(lines))
	return out
}
