package fs

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mfm-project/mfm/fs/content"
)

// immutableTTL is how long the kernel may cache entries and attributes
// inside episodes/ and previous/. Episodes are written under a temporary
// name and renamed complete, and never change afterwards; the one event
// that changes what a name means (a new life moving episodes/ to
// previous/life_N/) is detected by the life watcher, which invalidates the
// kernel's entries (from its own goroutine, never inside a handler).
const immutableTTL = time.Hour

// dirAttrTTL is the attribute timeout of directories whose attributes
// change rarely and harmlessly: the root (virtual, static), episodes/ and
// previous/ themselves (mtime and link count move as episodes arrive;
// listings and lookups of new names are never cached, so new episodes
// show at once). Without it every path walk through them costs a
// GETATTR (the mount uses default_permissions), several per entry of an
// `ls -l`.
const dirAttrTTL = time.Second

// rootEntryTTL is the entry timeout of the names at the root and of
// previous/life_N: they are fixed for the mount's life (or, for a life,
// once it exists), so path walks need not look them up again.
const rootEntryTTL = immutableTTL

// roNode is a read-only pass-through onto a store directory (episodes/,
// previous/, or mine/ under --read-only). It embeds go-fuse's LoopbackNode
// for lookups, listing, reads and attributes and answers every mutating
// call with EROFS. Names that do not exist on disk may resolve to virtual
// views (frame views, episode contact sheets).
type roNode struct {
	*gofs.LoopbackNode
	env      *roEnv
	ttl      time.Duration // entry/attr timeout for this node's children and itself
	kind     string        // access-log kind for files below ("episode", "note")
	childTTL time.Duration // timeout handed to children
	life     string        // the root of previous/life_N: "previous/life_N/"; else ""
	listed   *dirStamp     // the version of this directory the kernel may have cached (listing.go); guarded by env.listMu
}

var (
	_ = (gofs.NodeWrapChilder)((*roNode)(nil))
	_ = (gofs.NodeLookuper)((*roNode)(nil))
	_ = (gofs.NodeGetattrer)((*roNode)(nil))
	_ = (gofs.NodeOpener)((*roNode)(nil))
	_ = (gofs.NodeReader)((*roNode)(nil))
	_ = (gofs.NodeFlusher)((*roNode)(nil))
	_ = (gofs.NodeOpendirHandler)((*roNode)(nil))
	_ = (gofs.NodeSetattrer)((*roNode)(nil))
	_ = (gofs.NodeCreater)((*roNode)(nil))
	_ = (gofs.NodeMkdirer)((*roNode)(nil))
	_ = (gofs.NodeMknoder)((*roNode)(nil))
	_ = (gofs.NodeUnlinker)((*roNode)(nil))
	_ = (gofs.NodeRmdirer)((*roNode)(nil))
	_ = (gofs.NodeRenamer)((*roNode)(nil))
	_ = (gofs.NodeLinker)((*roNode)(nil))
	_ = (gofs.NodeSymlinker)((*roNode)(nil))
	_ = (gofs.NodeSetxattrer)((*roNode)(nil))
	_ = (gofs.NodeRemovexattrer)((*roNode)(nil))
	_ = (gofs.NodeGetxattrer)((*roNode)(nil))
	_ = (gofs.NodeListxattrer)((*roNode)(nil))
	_ = (gofs.NodeTmpfiler)((*roNode)(nil))
	_ = (gofs.NodeAllocater)((*roNode)(nil))
)

// roEnv is what the nodes of the read-only pass-through trees share:
// the generic nodes' environment, the views beside frames, the citation
// hook and the state of the kernel's cached listings (listing.go).
type roEnv struct {
	*nodeEnv
	views    *views
	citedBy  func(ctx context.Context, episodeDir string) ([]byte, error) // Hooks.CitedBy
	timeout  time.Duration                                                // Options.RenderTimeout
	ablation Ablation                                                     // Options.Ablation
	listMu   sync.Mutex                                                   // guards roNode.listed
	// statAheadHits counts READDIRPLUS lookups answered from a stat
	// taken ahead (statahead.go), for tests.
	statAheadHits atomic.Int64
}

// newROTree returns the root node of a read-only pass-through of dir.
// salt separates its inode numbers from other subtrees (see ino.go).
func (e *roEnv) newROTree(dir string, salt uint64, childTTL time.Duration, kind string) (*roNode, error) {
	lb, err := gofs.NewLoopbackRoot(dir)
	if err != nil {
		return nil, err
	}
	ln := lb.(*gofs.LoopbackNode)
	ln.RootData.Dev ^= salt
	return &roNode{LoopbackNode: ln, env: e, ttl: 0, kind: kind, childTTL: childTTL}, nil
}

func (n *roNode) WrapChild(ctx context.Context, ops gofs.InodeEmbedder) gofs.InodeEmbedder {
	ln, ok := ops.(*gofs.LoopbackNode)
	if !ok {
		return ops // a virtual child (overlay file, view)
	}
	return &roNode{LoopbackNode: ln, env: n.env, ttl: n.childTTL, childTTL: n.childTTL, kind: n.kind}
}

func (n *roNode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	if n.env.hiddenChild(n.env.ablation, &n.Inode, name) {
		return nil, syscall.ENOENT
	}
	if name == citedByName {
		if ops := n.citedByFile(); ops != nil {
			ch, errno := n.env.virtualChild(ctx, &n.Inode, name, ops, fuse.S_IFREG)
			if errno != 0 {
				return nil, errno
			}
			return ch, fillEntry(ctx, ch, out)
		}
	}
	ch, errno := n.LoopbackNode.Lookup(ctx, name, out)
	if errno == syscall.ENOENT && name == lifeMapName {
		if ops := n.lifeMapDir(); ops != nil {
			ch := n.NewInode(ctx, ops, gofs.StableAttr{Mode: fuse.S_IFDIR, Ino: virtualIno(n.StableAttr().Ino, name)})
			errno := fillEntry(ctx, ch, out)
			out.SetEntryTimeout(immutableTTL)
			return ch, errno
		}
	}
	if errno == syscall.ENOENT {
		return n.env.views.lookupVirtual(ctx, &n.Inode, name, out)
	}
	if errno != 0 {
		return nil, errno
	}
	n.childEntry(out)
	return ch, 0
}

// childEntry makes out, the entry of a backing child, read-only with the
// children's timeouts.
func (n *roNode) childEntry(out *fuse.EntryOut) {
	roAttr(&out.Attr)
	out.SetEntryTimeout(n.childTTL)
	out.SetAttrTimeout(n.childTTL)
}

// lookupAhead is Lookup of the backing entry a.name from its stat taken
// ahead (statahead.go): the node and attributes LoopbackNode.Lookup
// would give, without the lstat.
func (n *roNode) lookupAhead(ctx context.Context, a *aheadStat, out *fuse.EntryOut) *gofs.Inode {
	out.Attr.FromStat(&a.st)
	var ops gofs.InodeEmbedder = &gofs.LoopbackNode{RootData: n.RootData}
	if n.RootData.NewNode != nil {
		ops = n.RootData.NewNode(n.RootData, &n.Inode, a.name, &a.st)
	}
	ch := n.NewInode(ctx, ops, loopbackID(n.RootData, &a.st, &a.btime))
	n.childEntry(out)
	return ch
}

func (n *roNode) Getattr(ctx context.Context, f gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	errno := n.LoopbackNode.Getattr(ctx, f, out)
	roAttr(&out.Attr)
	out.SetTimeout(n.ttl)
	return errno
}

// roAttr clears the write bits, so tools see read-only files (and test
// -w, editors and rsync behave accordingly).
func roAttr(a *fuse.Attr) {
	if a.Mode&syscall.S_IFMT != syscall.S_IFLNK {
		a.Mode &^= 0o222
	}
}

func (n *roNode) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	if n.env.inCachedTree(&n.Inode) {
		// The kernel takes ENOSYS to mean "never send OPEN again" on
		// this connection, and reads through its page cache.
		return nil, 0, syscall.ENOSYS
	}
	if writeMode(flags) {
		return nil, 0, syscall.EROFS
	}
	if n.env.access.On() {
		path := "/" + n.env.storePath(&n.Inode)
		n.env.access.record(ctx, path, content.KindOfPath(path, n.kind))
	}
	fh, fl, errno := n.LoopbackNode.Open(ctx, flags)
	// Read-only: nothing to flush, so close(2) need not wait for a FLUSH
	// round trip (bench/mount.md has what that saves per opened frame).
	return fh, fl | fuse.FOPEN_NOFLUSH, errno
}

// Read answers a READ without a handle (a mount read through the
// kernel's cache, cachedmount.go)
// from the backing file; with a handle, the handle's. The kernel caches
// what it read, so a file is read from here once.
func (n *roNode) Read(ctx context.Context, fh gofs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if r, ok := fh.(gofs.FileReader); ok {
		return r.Read(ctx, dest, off)
	}
	return preadPath(n.backingPath(), dest, off)
}

// Flush: see bytesFile.Flush.
func (n *roNode) Flush(ctx context.Context, fh gofs.FileHandle) syscall.Errno {
	if fl, ok := fh.(gofs.FileFlusher); ok && !n.env.inCachedTree(&n.Inode) {
		return fl.Flush(ctx)
	}
	return syscall.ENOSYS
}

// backingPath is the node's file in the store.
func (n *roNode) backingPath() string {
	return filepath.Join(n.RootData.Path, n.Path(n.RootData.RootNode.EmbeddedInode()))
}

func (n *roNode) accessKind(path string) string { return content.KindOfPath(path, n.kind) }

func (n *roNode) OpendirHandle(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	n.env.access.record(ctx, "/"+n.env.storePath(&n.Inode), "list")
	cache, stamp := n.listingFlags()
	fh, fl, errno := n.LoopbackNode.OpendirHandle(ctx, flags)
	if errno == 0 && n.env.citedBy != nil && n.episodeDirRel() != "" {
		fh = &citedByDir{inner: fh, n: n, ino: virtualIno(n.StableAttr().Ino, citedByName)}
	}
	if errno == 0 && stamp != nil {
		fh, fl = &listedDir{dirStream: dirStream{fh}, n: n, stamp: stamp, names: n.inEpisode()}, fl|cache
	}
	return n.env.hideListed(n.env.ablation, &n.Inode, fh), fl, errno
}

func (n *roNode) Setattr(context.Context, gofs.FileHandle, *fuse.SetAttrIn, *fuse.AttrOut) syscall.Errno {
	return syscall.EROFS
}
func (n *roNode) Create(context.Context, string, uint32, uint32, *fuse.EntryOut) (*gofs.Inode, gofs.FileHandle, uint32, syscall.Errno) {
	return nil, nil, 0, syscall.EROFS
}
func (n *roNode) Mkdir(context.Context, string, uint32, *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}
func (n *roNode) Mknod(context.Context, string, uint32, uint32, *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}
func (n *roNode) Unlink(context.Context, string) syscall.Errno { return syscall.EROFS }
func (n *roNode) Rmdir(context.Context, string) syscall.Errno  { return syscall.EROFS }
func (n *roNode) Rename(context.Context, string, gofs.InodeEmbedder, string, uint32) syscall.Errno {
	return syscall.EROFS
}
func (n *roNode) Link(context.Context, gofs.InodeEmbedder, string, *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}
func (n *roNode) Symlink(context.Context, string, string, *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}
func (n *roNode) Setxattr(context.Context, string, []byte, uint32) syscall.Errno {
	return syscall.EROFS
}
func (n *roNode) Removexattr(context.Context, string) syscall.Errno { return syscall.EROFS }
func (n *roNode) Getxattr(context.Context, string, []byte) (uint32, syscall.Errno) {
	return 0, syscall.ENOSYS
}
func (n *roNode) Listxattr(context.Context, []byte) (uint32, syscall.Errno) {
	return 0, syscall.ENOSYS
}
func (n *roNode) Tmpfile(context.Context, uint32, uint32, *fuse.EntryOut) (*gofs.Inode, gofs.FileHandle, uint32, syscall.Errno) {
	return nil, nil, 0, syscall.EROFS
}
func (n *roNode) Allocate(context.Context, gofs.FileHandle, uint64, uint64, uint32) syscall.Errno {
	return syscall.EROFS
}
