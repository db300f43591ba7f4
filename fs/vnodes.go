package fs

import (
	"context"
	"log/slog"
	"os"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// This file holds the generic virtual node kinds every feature builds on:
// vdir (a computed directory), bytesFile (a computed file), proxyFile (a
// read-only window onto a store file chosen at open time) and linkNode (a
// symlink). All refuse writes with EROFS.

// lookupFunc resolves name inside a virtual directory. It returns the
// child's operations and file type (fuse.S_IFDIR, S_IFREG, S_IFLNK), or
// an errno (ENOENT for "no such entry").
type lookupFunc func(ctx context.Context, name string) (gofs.InodeEmbedder, uint32, syscall.Errno)

// listFunc lists the names a virtual directory shows to readdir; it may
// list fewer names than lookupFunc accepts.
type listFunc func(ctx context.Context) ([]fuse.DirEntry, syscall.Errno)

// vdir is a virtual read-only directory.
type vdir struct {
	gofs.Inode
	refuse
	m      *mfs
	lookup lookupFunc
	list   listFunc
	kind   string // access-log kind of opendir; "" means "list"
	// attrTTL is how long the kernel may cache this directory's own
	// attributes (0: ask every time). entryTTL, when set, is the entry
	// timeout of the names it resolves (their attribute timeout stays
	// what each child reports).
	attrTTL, entryTTL time.Duration
}

var (
	_ = (gofs.NodeLookuper)((*vdir)(nil))
	_ = (gofs.NodeReaddirer)((*vdir)(nil))
	_ = (gofs.NodeGetattrer)((*vdir)(nil))
	_ = (gofs.NodeOpendirer)((*vdir)(nil))
)

func (d *vdir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	if d.lookup == nil {
		return nil, syscall.ENOENT
	}
	ops, mode, errno := d.lookup(ctx, name)
	if errno != 0 {
		return nil, errno
	}
	ch := d.NewInode(ctx, ops, gofs.StableAttr{Mode: mode, Ino: virtualIno(d.StableAttr().Ino, name)})
	errno = fillEntry(ctx, ch, out)
	if d.entryTTL > 0 {
		out.SetEntryTimeout(d.entryTTL)
	}
	return ch, errno
}

// fillEntry copies the attributes of ch into out (entry and attr TTL 0:
// everything virtual is recomputed on each access).
func fillEntry(ctx context.Context, ch *gofs.Inode, out *fuse.EntryOut) syscall.Errno {
	ga, ok := ch.Operations().(gofs.NodeGetattrer)
	if !ok {
		return 0
	}
	var ao fuse.AttrOut
	if errno := ga.Getattr(ctx, nil, &ao); errno != 0 {
		return errno
	}
	out.Attr = ao.Attr
	out.SetEntryTimeout(ao.Timeout())
	out.SetAttrTimeout(ao.Timeout())
	return 0
}

func (d *vdir) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	if d.list == nil {
		return gofs.NewListDirStream(nil), 0
	}
	ents, errno := d.list(ctx)
	if errno != 0 {
		return nil, errno
	}
	return gofs.NewListDirStream(ents), 0
}

func (d *vdir) Opendir(ctx context.Context) syscall.Errno {
	kind := d.kind
	if kind == "" {
		kind = "list"
	}
	d.m.access.record(ctx, "/"+d.Path(nil), kind)
	return 0
}

func (d *vdir) Getattr(ctx context.Context, f gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	d.m.virtualAttr(&out.Attr, fuse.S_IFDIR|0o555, 0)
	out.Attr.Nlink = 2
	out.SetTimeout(d.attrTTL)
	return 0
}

// bytesFile is a virtual read-only file whose content is computed when it
// is looked up, stat'ed and opened. A live one (ttl 0: README.md, maps of
// the current life, q/ files) is opened with FOPEN_DIRECT_IO so a size
// that changed between stat and read never truncates or pads a read, and
// its entry and attributes are never cached. A stable one (ttl > 0: views
// of recorded frames, an earlier life's maps) never changes: the kernel
// caches its entry and attributes for ttl and keeps its pages across
// opens (FOPEN_KEEP_CACHE), so a repeated cat costs one OPEN round trip.
// Neither is flushed on close (FOPEN_NOFLUSH: there is nothing to flush).
type bytesFile struct {
	gofs.Inode
	refuse
	m       *mfs
	kind    string // access-log kind
	content func(ctx context.Context) ([]byte, error)
	ttl     time.Duration // > 0: stable content (see above)
}

var (
	_ = (gofs.NodeGetattrer)((*bytesFile)(nil))
	_ = (gofs.NodeOpener)((*bytesFile)(nil))
	_ = (gofs.NodeReader)((*bytesFile)(nil))
)

func (f *bytesFile) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	out.SetTimeout(f.ttl)
	if h, ok := fh.(*bytesHandle); ok {
		f.m.virtualAttr(&out.Attr, fuse.S_IFREG|0o444, uint64(len(h.data)))
		return 0
	}
	b, err := f.content(ctx)
	if err != nil {
		return f.m.fail(ctx, "/"+f.Path(nil), err)
	}
	f.m.virtualAttr(&out.Attr, fuse.S_IFREG|0o444, uint64(len(b)))
	return 0
}

func (f *bytesFile) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	if writeMode(flags) {
		return nil, 0, syscall.EROFS
	}
	p := "/" + f.Path(nil)
	b, err := f.content(ctx)
	if err != nil {
		return nil, 0, f.m.fail(ctx, p, err)
	}
	f.m.access.record(ctx, p, f.kind)
	if f.ttl > 0 {
		return &bytesHandle{data: b}, fuse.FOPEN_KEEP_CACHE | fuse.FOPEN_NOFLUSH, 0
	}
	return &bytesHandle{data: b}, fuse.FOPEN_DIRECT_IO | fuse.FOPEN_NOFLUSH, 0
}

func (f *bytesFile) Read(ctx context.Context, fh gofs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	h, ok := fh.(*bytesHandle)
	if !ok {
		return nil, syscall.EBADF
	}
	f.m.virtualReads.Add(1)
	if off >= int64(len(h.data)) {
		return fuse.ReadResultData(nil), 0
	}
	end := min(off+int64(len(dest)), int64(len(h.data)))
	return fuse.ReadResultData(h.data[off:end]), 0
}

// bytesHandle is one open of a bytesFile: the content as it was at open.
type bytesHandle struct{ data []byte }

// proxyFile is a read-only window onto a store file whose path is chosen
// at each access (now/state.json falls back to the last episode's state;
// /index.jsonl is the current life's index). Opens hand the kernel the
// backing descriptor (passthrough where the kernel allows it); attributes
// are never cached, so a growing file shows its live size to stat and
// tail -f, and an fd held open sees appended rows.
type proxyFile struct {
	gofs.Inode
	refuse
	m       *mfs
	kind    string
	resolve func() (string, error)
}

var (
	_ = (gofs.NodeGetattrer)((*proxyFile)(nil))
	_ = (gofs.NodeOpener)((*proxyFile)(nil))
)

func (f *proxyFile) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if fga, ok := fh.(gofs.FileGetattrer); ok {
		errno := fga.Getattr(ctx, out)
		out.Mode = fuse.S_IFREG | (out.Mode & 0o444)
		return errno
	}
	p, err := f.resolve()
	if err != nil {
		return syscall.ENOENT
	}
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil {
		return gofs.ToErrno(err)
	}
	out.FromStat(&st)
	out.Ino = f.StableAttr().Ino
	out.Mode = fuse.S_IFREG | (out.Mode & 0o444)
	return 0
}

func (f *proxyFile) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	if writeMode(flags) {
		return nil, 0, syscall.EROFS
	}
	p, err := f.resolve()
	if err != nil {
		return nil, 0, syscall.ENOENT
	}
	fd, err := syscall.Open(p, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, 0, gofs.ToErrno(err)
	}
	if f.m.access.on() {
		f.m.access.record(ctx, "/"+f.Path(nil), f.kind)
	}
	// Read-only: no FLUSH round trip on close. No KEEP_CACHE: the file
	// may grow (docs/MOUNT.md, "Growing files").
	return gofs.NewLoopbackFile(fd), fuse.FOPEN_NOFLUSH, 0
}

// linkNode is a virtual symlink.
type linkNode struct {
	gofs.Inode
	refuse
	m      *mfs
	target string
}

var (
	_ = (gofs.NodeReadlinker)((*linkNode)(nil))
	_ = (gofs.NodeGetattrer)((*linkNode)(nil))
)

func (l *linkNode) Readlink(ctx context.Context) ([]byte, syscall.Errno) {
	return []byte(l.target), 0
}

func (l *linkNode) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	l.m.virtualAttr(&out.Attr, fuse.S_IFLNK|0o777, uint64(len(l.target)))
	return 0
}

// virtualAttr fills attributes of a virtual node: owner of the store,
// times of the mount.
func (m *mfs) virtualAttr(a *fuse.Attr, mode uint32, size uint64) {
	a.Mode = mode
	a.Size = size
	a.Blocks = (size + 511) / 512
	a.Blksize = 4096
	a.Nlink = 1
	a.Uid, a.Gid = m.uid, m.gid
	t := m.started
	a.SetTimes(&t, &t, &t)
}

// fail records err for path in the error log (/.errors) and returns the
// errno the caller should answer with.
func (m *mfs) fail(ctx context.Context, path string, err error) syscall.Errno {
	errno := errnoOf(err)
	if errno == syscall.EINTR {
		return errno // an interrupted request is retried, not the agent's error
	}
	m.errs.add(path, err)
	m.log.Debug("mount: request failed", slog.String("path", path), slog.Any("err", err))
	return errno
}

// storeOwner reads the uid/gid of the store root for virtual nodes.
func storeOwner(root string) (uint32, uint32) {
	st, err := os.Stat(root)
	if err != nil {
		return 0, 0
	}
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return s.Uid, s.Gid
	}
	return 0, 0
}
