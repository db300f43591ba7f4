package fs

import (
	"context"

	gofs "github.com/hanwen/go-fuse/v2/fs"
)

// newErrorsFile serves /.errors: the mount's error log, then the query
// and view grammars.
func newErrorsFile(m *mfs) (gofs.InodeEmbedder, error) {
	return &bytesFile{env: m.nodeEnv, kind: "errors", content: func(ctx context.Context) ([]byte, error) {
		return m.errs.Render(grammars(m.opt.Hooks)), nil
	}}, nil
}

// grammars returns the help texts /.errors shows after the errors.
func grammars(h Hooks) []string {
	var out []string
	if h.Viewer != nil {
		out = append(out, h.Viewer.Grammar())
	}
	if h.Querier != nil {
		out = append(out, h.Querier.Grammar())
	}
	return out
}

// grammar is g's help text, "" without g.
func grammar(g interface{ Grammar() string }) string {
	if g == nil {
		return ""
	}
	return g.Grammar()
}
