package fs

import (
	"context"
	"path"
	"path/filepath"
	"sync"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// mineNode is the read-write pass-through onto store/mine/: go-fuse's
// LoopbackNode (full POSIX semantics: offset writes, truncate, rename over
// existing files, unlink of open files, symlinks, fsync, locks, mtimes)
// plus the access log, virtual overlay files (mineOverlay) and no
// extended attributes.
type mineNode struct {
	*gofs.LoopbackNode
	m *mfs

	// dirFds are O_PATH descriptors of this directory, one per open
	// handle (see OpendirHandle), so Getattr still answers for a
	// directory that was removed or renamed over while open.
	dirMu  sync.Mutex
	dirFds []int
}

var (
	_ = (gofs.NodeWrapChilder)((*mineNode)(nil))
	_ = (gofs.NodeLookuper)((*mineNode)(nil))
	_ = (gofs.NodeOpener)((*mineNode)(nil))
	_ = (gofs.NodeCreater)((*mineNode)(nil))
	_ = (gofs.NodeRenamer)((*mineNode)(nil))
	_ = (gofs.NodeLinker)((*mineNode)(nil))
	_ = (gofs.NodeOpendirHandler)((*mineNode)(nil))
	_ = (gofs.NodeGetattrer)((*mineNode)(nil))
	_ = (gofs.NodeGetxattrer)((*mineNode)(nil))
	_ = (gofs.NodeListxattrer)((*mineNode)(nil))
	_ = (gofs.NodeSetxattrer)((*mineNode)(nil))
	_ = (gofs.NodeRemovexattrer)((*mineNode)(nil))
)

func (m *mfs) newMineTree(dir string) (*mineNode, error) {
	lb, err := gofs.NewLoopbackRoot(dir)
	if err != nil {
		return nil, err
	}
	ln := lb.(*gofs.LoopbackNode)
	ln.RootData.Dev ^= saltMine
	return &mineNode{LoopbackNode: ln, m: m}, nil
}

func (n *mineNode) WrapChild(ctx context.Context, ops gofs.InodeEmbedder) gofs.InodeEmbedder {
	ln, ok := ops.(*gofs.LoopbackNode)
	if !ok {
		return ops // a virtual child (overlay file, view)
	}
	return &mineNode{LoopbackNode: ln, m: n.m}
}

// mineRel is the node's path relative to mine/ ("" for mine/ itself).
func (n *mineNode) mineRel() string {
	return n.Path(n.RootData.RootNode.EmbeddedInode())
}

func (n *mineNode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	if n.m.hiddenChild(n.m.opt.Ablation, &n.Inode, name) {
		return nil, syscall.ENOENT
	}
	if mk, ok := mineOverlay[path.Join(n.mineRel(), name)]; ok {
		if ops := mk(n.m); ops != nil {
			ch := n.NewInode(ctx, ops, gofs.StableAttr{Mode: fuse.S_IFREG, Ino: virtualIno(n.StableAttr().Ino, name)})
			return ch, fillEntry(ctx, ch, out)
		}
	}
	return n.LoopbackNode.Lookup(ctx, name, out)
}

func (n *mineNode) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	n.m.access.record(ctx, "/"+n.Path(nil), "note")
	return n.LoopbackNode.Open(ctx, flags)
}

func (n *mineNode) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*gofs.Inode, gofs.FileHandle, uint32, syscall.Errno) {
	n.m.access.record(ctx, "/"+path.Join(n.Path(nil), name), "note-write")
	return n.LoopbackNode.Create(ctx, name, flags, mode, out)
}

// OpendirHandle is the loopback's, plus an O_PATH descriptor of the
// directory held until the handle is released: fstat(2) of an open
// directory that was then removed or renamed over must still work
// (posixtest RenameOpenDir), but the kernel sends GETATTR of a directory
// without its handle and the loopback stats the path, which is gone.
func (n *mineNode) OpendirHandle(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	fh, fl, errno := n.LoopbackNode.OpendirHandle(ctx, flags)
	if errno != 0 {
		return fh, fl, errno
	}
	backing := filepath.Join(n.RootData.Path, n.mineRel())
	fd, err := syscall.Open(backing, unix.O_PATH|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fh, fl, 0 // still listable; only the fallback of Getattr is lost
	}
	n.dirMu.Lock()
	n.dirFds = append(n.dirFds, fd)
	n.dirMu.Unlock()
	return n.m.hideListed(n.m.opt.Ablation, &n.Inode, &mineDir{dirStream: dirStream{fh}, node: n, fd: fd}), fl, 0
}

// Getattr is the loopback's; for a directory whose path is gone while a
// handle of it is open, the attributes of the open directory.
func (n *mineNode) Getattr(ctx context.Context, f gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	errno := n.LoopbackNode.Getattr(ctx, f, out)
	if errno != syscall.ENOENT {
		return errno
	}
	n.dirMu.Lock()
	defer n.dirMu.Unlock()
	if len(n.dirFds) == 0 {
		return errno
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(n.dirFds[0], &st); err != nil {
		return errno
	}
	out.FromStat(&st)
	return 0
}

// mineDir is an open directory of mine/: the loopback's stream, plus the
// O_PATH descriptor mineNode.Getattr falls back to, closed on release.
type mineDir struct {
	dirStream
	node *mineNode
	fd   int
}

var (
	_ = (gofs.FileReaddirenter)((*mineDir)(nil))
	_ = (gofs.FileSeekdirer)((*mineDir)(nil))
	_ = (gofs.FileFsyncdirer)((*mineDir)(nil))
	_ = (gofs.FileReleasedirer)((*mineDir)(nil))
)

func (d *mineDir) Releasedir(ctx context.Context, flags uint32) {
	d.dirStream.Releasedir(ctx, flags)
	n := d.node
	n.dirMu.Lock()
	for i, fd := range n.dirFds {
		if fd == d.fd {
			n.dirFds = append(n.dirFds[:i], n.dirFds[i+1:]...)
			break
		}
	}
	n.dirMu.Unlock()
	syscall.Close(d.fd)
}

// Rename within mine/ is the loopback's; a rename into the read-only part
// of the mount is EROFS (the target is read-only), not EXDEV.
func (n *mineNode) Rename(ctx context.Context, name string, newParent gofs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	if _, ok := newParent.(*mineNode); !ok {
		return syscall.EROFS
	}
	return n.LoopbackNode.Rename(ctx, name, newParent, newName, flags)
}

// Link within mine/ is the loopback's. A hard link to a record file
// would make it writable through mine/: EROFS.
func (n *mineNode) Link(ctx context.Context, target gofs.InodeEmbedder, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	if _, ok := target.(*mineNode); !ok {
		return nil, syscall.EROFS
	}
	return n.LoopbackNode.Link(ctx, target, name, out)
}

func (n *mineNode) Getxattr(context.Context, string, []byte) (uint32, syscall.Errno) {
	return 0, syscall.ENOSYS
}
func (n *mineNode) Listxattr(context.Context, []byte) (uint32, syscall.Errno) {
	return 0, syscall.ENOSYS
}
func (n *mineNode) Setxattr(context.Context, string, []byte, uint32) syscall.Errno {
	return syscall.ENOTSUP
}
func (n *mineNode) Removexattr(context.Context, string) syscall.Errno { return syscall.ENOTSUP }

// mineOverlay maps paths relative to mine/ (e.g. "procedures/.catalog")
// to virtual read-only files generated by other features. An entry
// resolves on lookup and is not listed by readdir. Register entries from
// an init function in the feature's own file in this package; a
// constructor returning nil (its hook is not set) leaves the name to disk.
var mineOverlay = map[string]func(m *mfs) gofs.InodeEmbedder{}
