package fs

import (
	"context"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/fs/content"
	"github.com/mfm-project/mfm/internal/lru"
)

// views serves Hooks.Viewer's virtual images as nodes: views beside
// frames and episode sheets (lookupVirtual), and the maps of map/ and
// previous/life_N/map/ (mapDir).
type views struct {
	env     *nodeEnv
	viewer  Viewer // nil: no views
	timeout time.Duration
	// recent holds the bytes of recently looked-up fixed views
	// (fixedChild), keyed by viewKey, within ViewBytesBudget.
	recent *lru.Cache[[]byte]
}

// ViewBytesBudget bounds the bytes of rendered views the mount itself
// keeps (views.recent); a view over a quarter of it is not kept. Nodes
// of views hold no bytes, so this and the Viewer's own caches are all
// the memory views take, however many the kernel keeps.
const ViewBytesBudget = 16 << 20

// newViews returns the views of a mount.
func newViews(env *nodeEnv, viewer Viewer, timeout time.Duration) *views {
	return &views{env: env, viewer: viewer, timeout: timeout,
		recent: lru.New(ViewBytesBudget, func(b []byte) int64 { return int64(len(b)) + 64 })}
}

// viewKey is the key of a fixed view's bytes in views.recent.
func viewKey(rel string, sum uint64) string { return rel + "\x00" + strconv.FormatUint(sum, 16) }

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
	if stable := stableView(v.viewer, rel); stable || v.env.inCachedTree(parent) {
		return v.fixedChild(ctx, parent, rel, name, data, stable, out)
	}
	ops := &bytesFile{env: v.env, kind: "view"}
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
	ch, errno := v.env.virtualChild(ctx, parent, name, ops, fuse.S_IFREG)
	if errno != 0 {
		return nil, errno
	}
	return ch, fillEntry(ctx, ch, out)
}

// fixedChild makes the node of the view rel whose bytes (data, just
// rendered) are fixed for the inode's life: a stable view, or any view
// in a mount read through the kernel's cache (where other bytes are
// another inode generation). The node keeps their size and hash, not
// the bytes: the kernel may keep such inodes for as long as it likes,
// and a thousand distinct views would otherwise hold a thousand renders
// in the daemon (docs/SECURITY.md, "Memory"). An open or a read takes
// the bytes from views.recent, or else asks the Viewer again (whose
// render cache makes a recent view cheap) and checks the hash.
func (v *views) fixedChild(ctx context.Context, parent *gofs.Inode, rel, name string, data []byte, stable bool, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	sum := viewSum(data)
	v.recent.Put(viewKey(rel, sum), data)
	f := &viewFile{views: v, rel: rel, size: int64(len(data)), sum: sum}
	if stable {
		f.ttl = immutableTTL
	}
	attr := gofs.StableAttr{Mode: fuse.S_IFREG, Ino: virtualIno(parent.StableAttr().Ino, name)}
	if v.env.inCachedTree(parent) {
		attr.Gen = sum | 1 // the same bytes are the inode the kernel has
	}
	ch := parent.NewInode(ctx, f, attr)
	return ch, fillEntry(ctx, ch, out)
}

// viewSum is the hash a viewFile checks a render against.
func viewSum(b []byte) uint64 {
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}

// viewFile is a view whose bytes are fixed (fixedChild): it holds their
// size and hash, and renders them again when they are read.
type viewFile struct {
	gofs.Inode
	refuse
	views *views
	rel   string
	size  int64
	sum   uint64
	ttl   time.Duration // immutableTTL for a stable view
}

var (
	_ = (gofs.NodeGetattrer)((*viewFile)(nil))
	_ = (gofs.NodeOpener)((*viewFile)(nil))
	_ = (gofs.NodeReader)((*viewFile)(nil))
	_ = (gofs.NodeFlusher)((*viewFile)(nil))
)

// bytes are the view's bytes: the recent ones, or a new render; a
// render that is not the bytes the inode was made with fails with
// ESTALE (a view of now/ that changed since its lookup, and whose bytes
// the mount no longer had: look it up again).
func (f *viewFile) bytes(ctx context.Context) ([]byte, error) {
	key := viewKey(f.rel, f.sum)
	if b, ok := f.views.recent.Get(key); ok {
		return b, nil
	}
	b, err := f.views.render(ctx, f.rel)
	if err != nil {
		return nil, err
	}
	if int64(len(b)) != f.size || viewSum(b) != f.sum {
		return nil, fmt.Errorf("view %s changed since it was looked up (look it up again): %w", f.rel, syscall.ESTALE)
	}
	f.views.recent.Put(key, b)
	return b, nil
}

func (f *viewFile) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	out.SetTimeout(f.ttl)
	f.views.env.virtualAttr(&out.Attr, fuse.S_IFREG|0o444, uint64(f.size))
	return 0
}

func (f *viewFile) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	env := f.views.env
	if env.inCachedTree(&f.Inode) {
		return nil, 0, syscall.ENOSYS // no opens on this connection (cachedmount.go)
	}
	if writeMode(flags) {
		return nil, 0, syscall.EROFS
	}
	b, err := f.bytes(ctx)
	if err != nil {
		return nil, 0, env.fail(ctx, "/"+f.rel, err)
	}
	env.access.record(ctx, "/"+f.rel, "view")
	return openBytes(b, f.ttl)
}

func (f *viewFile) Read(ctx context.Context, fh gofs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	var data []byte
	if h, ok := fh.(*bytesHandle); ok {
		data = h.data
	} else {
		var err error
		if data, err = f.bytes(ctx); err != nil {
			return nil, f.views.env.fail(ctx, "/"+f.rel, err)
		}
	}
	f.views.env.virtualReads.Add(1)
	return bytesAt(data, dest, off), 0
}

// Flush answers ENOSYS: nothing to flush, and the kernel stops asking.
func (f *viewFile) Flush(context.Context, gofs.FileHandle) syscall.Errno { return syscall.ENOSYS }

func (f *viewFile) accessKind(string) string { return "view" }

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
