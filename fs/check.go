package fs

import (
	"context"

	gofs "github.com/hanwen/go-fuse/v2/fs"
)

// /mine/.check: what is wrong in mine/ (Hooks.Check) — citations of
// episodes that do not exist, with file and line, and procedures without
// a description. A virtual read-only file rendered on each open, under
// the render timeout; not listed by readdir.
func init() {
	mineOverlay[".check"] = func(m *mfs) gofs.InodeEmbedder {
		check := m.opt.Hooks.Check
		if check == nil {
			return nil
		}
		return &bytesFile{env: m.nodeEnv, kind: "check", content: func(ctx context.Context) ([]byte, error) {
			ctx, cancel := context.WithTimeout(ctx, m.opt.RenderTimeout)
			defer cancel()
			return check(ctx)
		}}
	}
}
