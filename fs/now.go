package fs

import (
	"context"
	"errors"
	"os"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/fs/content"
)

// newNowDir serves /now/: the latest state (rendered) and the latest
// frame (a pass-through to its store file), looked up again at each access.
func newNowDir(m *mfs) (gofs.InodeEmbedder, error) {
	d := &vdir{env: m.nodeEnv}
	d.lookup = func(ctx context.Context, name string) (gofs.InodeEmbedder, uint32, syscall.Errno) {
		if err := content.NowExists(m.store, name); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, 0, syscall.ENOENT
			}
			return nil, 0, m.fail(ctx, "/now/"+name, err)
		}
		if name == episodes.NowStateName {
			return &bytesFile{env: m.nodeEnv, kind: "now", content: func(context.Context) ([]byte, error) { return content.NowState(m.store) }}, fuse.S_IFREG, 0
		}
		return &proxyFile{env: m.nodeEnv, kind: "now", resolve: func() (string, error) { return content.NowFramePath(m.store) }}, fuse.S_IFREG, 0
	}
	d.list = func(ctx context.Context) ([]fuse.DirEntry, syscall.Errno) {
		var out []fuse.DirEntry
		for _, name := range content.NowNames() {
			if content.NowExists(m.store, name) == nil {
				out = append(out, fuse.DirEntry{Name: name, Mode: fuse.S_IFREG, Ino: virtualIno(d.StableAttr().Ino, name)})
			}
		}
		return out, 0
	}
	return d, nil
}
