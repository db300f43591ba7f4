package fs

import (
	"context"

	gofs "github.com/hanwen/go-fuse/v2/fs"
)

// /mine/procedures/.catalog: the procedure catalog (Hooks.ProcedureCatalog),
// a virtual read-only file rendered on each open; not listed by readdir.
func init() {
	mineOverlay["procedures/.catalog"] = func(m *mfs) gofs.InodeEmbedder {
		cat := m.opt.Hooks.ProcedureCatalog
		if cat == nil {
			return nil
		}
		return &bytesFile{env: m.nodeEnv, kind: "catalog", content: func(ctx context.Context) ([]byte, error) {
			ctx, cancel := context.WithTimeout(ctx, m.opt.RenderTimeout)
			defer cancel()
			return cat(ctx)
		}}
	}
}
