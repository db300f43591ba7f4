package fs

import (
	"context"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/fs/content"
)

// views serves Hooks.Viewer's virtual images as nodes: views beside
// frames and episode sheets (lookupVirtual), and the maps of map/ and
// previous/life_N/map/ (mapDir).
type views struct {
	env     *nodeEnv
	viewer  Viewer // nil: no views
	timeout time.Duration
}

// lookupVirtual resolves a name that does not exist on disk inside a
// read-only store directory: a view of a frame or an episode sheet. The
// view is rendered here, once, so its size is known to the lookup; frames
// never change, so the bytes stay valid for the inode's life.
func (v *views) lookupVirtual(ctx context.Context, parent *gofs.Inode, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	rel := v.env.storePath(parent) + "/" + name
	return v.lookup(ctx, parent, rel, name, out)
}

// lookup renders the view rel and returns it as a child of parent.
// A name that is not a view is ENOENT; a malformed or failed view is
// EINVAL with its message in /.errors.
func (v *views) lookup(ctx context.Context, parent *gofs.Inode, rel, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	if v.viewer == nil {
		return nil, syscall.ENOENT
	}
	rctx, cancel := context.WithTimeout(ctx, v.timeout)
	defer cancel()
	data, ok, err := v.viewer.View(rctx, rel)
	if !ok {
		return nil, syscall.ENOENT
	}
	if err != nil {
		return nil, v.env.fail(ctx, "/"+rel, content.Invalid(err))
	}
	ops := &bytesFile{env: v.env, kind: "view"}
	if stableView(v.viewer, rel) {
		// Rendered once: the bytes stay valid for the inode's life.
		ops.ttl = immutableTTL
		ops.content = func(context.Context) ([]byte, error) { return data, nil }
	} else {
		// Live (map/here, then-and-now, the current life's map): each
		// stat and open asks the Viewer again (its cache makes an
		// unchanged view cheap). The kernel may hand back an inode it
		// still holds for this name, so the content must not be the
		// bytes of this lookup.
		// The first stat (this lookup's fillEntry) uses this render.
		var first atomic.Pointer[[]byte]
		first.Store(&data)
		ops.content = func(ctx context.Context) ([]byte, error) {
			if b := first.Swap(nil); b != nil {
				return *b, nil
			}
			return v.render(ctx, rel)
		}
	}
	ch, errno := v.env.virtualChild(ctx, parent, name, ops, fuse.S_IFREG)
	if errno != 0 {
		return nil, errno
	}
	return ch, fillEntry(ctx, ch, out)
}

// render renders rel again for a live view's stat or open.
func (v *views) render(ctx context.Context, rel string) ([]byte, error) {
	rctx, cancel := context.WithTimeout(ctx, v.timeout)
	defer cancel()
	data, ok, err := v.viewer.View(rctx, rel)
	if !ok {
		return nil, syscall.ENOENT
	}
	if err != nil {
		return nil, content.Invalid(err)
	}
	return data, nil
}

// stableView reports whether the kernel may cache the view rel: only
// views beside recorded frames (episodes/, previous/) that the Viewer
// says never change.
func stableView(v Viewer, rel string) bool {
	sv, ok := v.(StableViewer)
	if !ok {
		return false
	}
	if !strings.HasPrefix(rel, episodes.EpisodesDir+"/") && !strings.HasPrefix(rel, episodes.PreviousDir+"/") {
		return false
	}
	return sv.Stable(rel)
}

// newMapDir serves map/: every name is a map view (not listed).
func newMapDir(m *mfs) (gofs.InodeEmbedder, error) {
	d := &vdir{env: m.nodeEnv}
	return &mapDir{vdir: d, views: m.views, prefix: "map/"}, nil
}

// mapDir resolves map views on lookup: map/ at the root (the current
// life) and previous/life_N/map/ (that life's grid and index; not listed
// in the life's directory, like every view).
type mapDir struct {
	*vdir
	views  *views
	prefix string // "map/" or "previous/life_N/map/"
}

var _ = (gofs.NodeLookuper)((*mapDir)(nil))

func (d *mapDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return d.views.lookup(ctx, d.EmbeddedInode(), d.prefix+name, name, out)
}

// lifeMapName is the directory of an earlier life's maps, beside its
// grid.jsonl (previous/life_N/map/).
const lifeMapName = "map"

// lifeMapDir returns previous/life_N/map/ for the life tree n, or nil
// when n is not a life's root or no Viewer is set.
func (n *roNode) lifeMapDir() gofs.InodeEmbedder {
	if n.life == "" || n.env.views.viewer == nil {
		return nil
	}
	// A frozen life's maps never change: its map/ entry is cached like
	// the life's own files (the maps inside follow StableViewer).
	d := &vdir{env: n.env.nodeEnv, attrTTL: immutableTTL}
	return &mapDir{vdir: d, views: n.env.views, prefix: n.life + lifeMapName + "/"}
}
