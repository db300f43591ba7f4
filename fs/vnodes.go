package fs

import (
	"context"
	"errors"
	"hash/fnv"
	"path"
	"sync"
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
	env    *nodeEnv
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
	ch, errno := d.env.virtualChild(ctx, &d.Inode, name, ops, mode)
	if errno != 0 {
		return nil, errno
	}
	errno = fillEntry(ctx, ch, out)
	if f, ok := ops.(*bytesFile); d.entryTTL > 0 && (!ok || f.ttl > 0) {
		out.SetEntryTimeout(d.entryTTL) // a live file's entry stays uncached
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
	d.env.access.record(ctx, "/"+d.env.storePath(&d.Inode), kind)
	return 0
}

func (d *vdir) Getattr(ctx context.Context, f gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	d.env.virtualAttr(&out.Attr, fuse.S_IFDIR|0o555, 0)
	out.Attr.Nlink = 2
	out.SetTimeout(d.attrTTL)
	return 0
}

// bytesFile is a virtual read-only file whose content is computed when it
// is looked up, stat'ed and opened. A live one (ttl 0: README.md, maps of
// the current life, q/ files) has its entry and attributes never cached;
// a stable one (ttl > 0: views of recorded frames, an earlier life's
// maps) never changes, and the kernel caches its entry and attributes for
// ttl. Neither is flushed on close (there is nothing to flush).
//
// On the store's mount each open takes the content as it is then: a live
// file is opened FOPEN_DIRECT_IO, so a size that changed between stat and
// read never truncates or pads a read; a stable one FOPEN_KEEP_CACHE. In
// a mount read through the kernel's cache (episodes/ and previous/ as
// root, cachedmount.go: views beside frames, cited-by) no open reaches the
// daemon, so the content is fixed when the inode is made (virtualChild):
// a lookup that computes other bytes makes another inode (another
// generation) for the name, as if the file had been replaced by rename,
// so a reader never mixes two versions and one that holds the file open
// keeps reading its version.
type bytesFile struct {
	gofs.Inode
	refuse
	env     *nodeEnv
	kind    string // access-log kind
	content func(ctx context.Context) ([]byte, error)
	ttl     time.Duration // > 0: stable content (see above)

	once sync.Once
	snap []byte // the inode's content without per-open handles
	err  error
}

var (
	_ = (gofs.NodeGetattrer)((*bytesFile)(nil))
	_ = (gofs.NodeOpener)((*bytesFile)(nil))
	_ = (gofs.NodeReader)((*bytesFile)(nil))
	_ = (gofs.NodeFlusher)((*bytesFile)(nil))
)

// snapshot is the content of this inode without per-open handles,
// computed on first use.
func (f *bytesFile) snapshot(ctx context.Context) ([]byte, error) {
	f.once.Do(func() { f.snap, f.err = f.content(ctx) })
	return f.snap, f.err
}

func (f *bytesFile) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	out.SetTimeout(f.ttl)
	if h, ok := fh.(*bytesHandle); ok {
		f.env.virtualAttr(&out.Attr, fuse.S_IFREG|0o444, uint64(len(h.data)))
		return 0
	}
	var b []byte
	var err error
	if f.env.inCachedTree(&f.Inode) {
		b, err = f.snapshot(ctx)
	} else {
		b, err = f.content(ctx)
	}
	if err != nil {
		return f.env.fail(ctx, "/"+f.env.storePath(&f.Inode), err)
	}
	f.env.virtualAttr(&out.Attr, fuse.S_IFREG|0o444, uint64(len(b)))
	return 0
}

func (f *bytesFile) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	if f.env.inCachedTree(&f.Inode) {
		return nil, 0, syscall.ENOSYS
	}
	if writeMode(flags) {
		return nil, 0, syscall.EROFS
	}
	p := "/" + f.env.storePath(&f.Inode)
	b, err := f.content(ctx)
	if err != nil {
		return nil, 0, f.env.fail(ctx, p, err)
	}
	f.env.access.record(ctx, p, f.kind)
	return openBytes(b, f.ttl)
}

func (f *bytesFile) Read(ctx context.Context, fh gofs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	var data []byte
	if h, ok := fh.(*bytesHandle); ok {
		data = h.data
	} else {
		var err error
		if data, err = f.snapshot(ctx); err != nil {
			return nil, f.env.fail(ctx, "/"+f.env.storePath(&f.Inode), err)
		}
	}
	f.env.virtualReads.Add(1)
	return bytesAt(data, dest, off), 0
}

// Flush answers ENOSYS, which tells the kernel never to send FLUSH on
// this connection (a read-only file has nothing to flush).
func (f *bytesFile) Flush(context.Context, gofs.FileHandle) syscall.Errno { return syscall.ENOSYS }

func (f *bytesFile) accessKind(string) string { return f.kind }

// virtualChild makes the inode of the virtual node ops, named name in
// parent. In a mount read through the kernel's cache a bytesFile's
// content is fixed here,
// and its hash is the inode's generation: the same bytes are the inode
// the kernel already has (and its cached pages), other bytes a new one.
func (e *nodeEnv) virtualChild(ctx context.Context, parent *gofs.Inode, name string, ops gofs.InodeEmbedder, mode uint32) (*gofs.Inode, syscall.Errno) {
	attr := gofs.StableAttr{Mode: mode, Ino: virtualIno(parent.StableAttr().Ino, name)}
	if f, ok := ops.(*bytesFile); ok && e.inCachedTree(parent) {
		// A fresh node each time: a lookup may hand back one bytesFile
		// for a name, and an inode's content is fixed.
		f = &bytesFile{env: f.env, kind: f.kind, content: f.content, ttl: f.ttl}
		ops = f
		b, err := f.snapshot(ctx)
		if err != nil {
			return nil, e.fail(ctx, "/"+path.Join(e.storePath(parent), name), err)
		}
		h := fnv.New64a()
		h.Write(b)
		attr.Gen = h.Sum64() | 1 // never 0
	}
	return parent.NewInode(ctx, ops, attr), 0
}

// bytesHandle is one open of a bytesFile: the content as it was at open.
type bytesHandle struct{ data []byte }

// openBytes opens a virtual file whose content is b: the kernel keeps
// the pages of a stable one (ttl > 0) and reads a live one directly.
func openBytes(b []byte, ttl time.Duration) (gofs.FileHandle, uint32, syscall.Errno) {
	if ttl > 0 {
		return &bytesHandle{data: b}, fuse.FOPEN_KEEP_CACHE | fuse.FOPEN_NOFLUSH, 0
	}
	return &bytesHandle{data: b}, fuse.FOPEN_DIRECT_IO | fuse.FOPEN_NOFLUSH, 0
}

// bytesAt answers a read of len(dest) bytes at off from data.
func bytesAt(data, dest []byte, off int64) fuse.ReadResult {
	if off >= int64(len(data)) {
		return fuse.ReadResultData(nil)
	}
	return fuse.ReadResultData(data[off:min(off+int64(len(dest)), int64(len(data)))])
}

// proxyFile is a read-only window onto a store file whose path is chosen
// at each access (now/state.json falls back to the last episode's state;
// /index.jsonl is the current life's index). Opens hand the kernel the
// backing descriptor (passthrough where the kernel allows it); attributes
// are never cached, so a growing file shows its live size to stat and
// tail -f, and an fd held open sees appended rows.
type proxyFile struct {
	gofs.Inode
	refuse
	env     *nodeEnv
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
	if f.env.access.On() {
		f.env.access.record(ctx, "/"+f.env.storePath(&f.Inode), f.kind)
	}
	// Read-only: no FLUSH round trip on close. No KEEP_CACHE: the file
	// may grow (docs/MOUNT.md, "Growing files").
	return gofs.NewLoopbackFile(fd), fuse.FOPEN_NOFLUSH, 0
}

// preadPath answers a READ of len(dest) bytes at off from the file at p.
// A small read is copied into dest; a large one is spliced from the file
// into the reply (go-fuse splices a result that can say where its bytes
// are, spliceRead), which saves the daemon a copy of each 128 KiB.
func preadPath(p string, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	fd, err := syscall.Open(p, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOATIME, 0)
	if errors.Is(err, syscall.EPERM) { // O_NOATIME needs the file's owner or CAP_FOWNER
		fd, err = syscall.Open(p, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	}
	if err != nil {
		return nil, gofs.ToErrno(err)
	}
	if len(dest) >= spliceMin {
		var st syscall.Stat_t
		if err := syscall.Fstat(fd, &st); err == nil {
			n := max(0, min(int64(len(dest)), st.Size-off))
			return &spliceRead{fd: fd, off: off, size: int(n)}, 0
		}
	}
	defer syscall.Close(fd)
	n := 0
	for n < len(dest) {
		k, err := syscall.Pread(fd, dest[n:], off+int64(n))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, gofs.ToErrno(err)
		}
		if k == 0 {
			break
		}
		n += k
	}
	return fuse.ReadResultData(dest[:n]), 0
}

// spliceMin is the READ size from which preadPath splices.
const spliceMin = 64 << 10

// spliceRead is a READ answer go-fuse splices from an open file (it has
// go-fuse's Seekable method); Done closes the file once the reply is sent.
type spliceRead struct {
	fd   int
	off  int64
	size int
}

// Seekable tells go-fuse where the bytes are, so it can splice them.
func (r *spliceRead) Seekable() (uintptr, int64, int) { return uintptr(r.fd), r.off, r.size }

// Bytes reads the bytes when splicing is not possible.
func (r *spliceRead) Bytes(buf []byte) ([]byte, fuse.Status) {
	if cap(buf) < r.size {
		buf = make([]byte, r.size)
	}
	n, err := syscall.Pread(r.fd, buf[:r.size], r.off)
	if err != nil {
		return nil, fuse.ToStatus(err)
	}
	return buf[:n], fuse.OK
}

// Size is the number of bytes of the answer.
func (r *spliceRead) Size() int { return r.size }

// Done closes the file.
func (r *spliceRead) Done() { syscall.Close(r.fd) }

// linkNode is a virtual symlink.
type linkNode struct {
	gofs.Inode
	refuse
	env    *nodeEnv
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
	l.env.virtualAttr(&out.Attr, fuse.S_IFLNK|0o777, uint64(len(l.target)))
	return 0
}

// dirStream forwards the directory calls go-fuse makes on a handle
// (listing, seeking, fsync, release) to the handle it wraps. Handles that
// add to a listing or to its release embed it and override those calls.
type dirStream struct{ gofs.FileHandle }

var (
	_ = (gofs.FileReaddirenter)(dirStream{})
	_ = (gofs.FileSeekdirer)(dirStream{})
	_ = (gofs.FileFsyncdirer)(dirStream{})
	_ = (gofs.FileReleasedirer)(dirStream{})
)

func (d dirStream) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	if r, ok := d.FileHandle.(gofs.FileReaddirenter); ok {
		return r.Readdirent(ctx)
	}
	return nil, 0
}

func (d dirStream) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	if s, ok := d.FileHandle.(gofs.FileSeekdirer); ok {
		return s.Seekdir(ctx, off)
	}
	return syscall.ENOTSUP
}

func (d dirStream) Fsyncdir(ctx context.Context, flags uint32) syscall.Errno {
	if s, ok := d.FileHandle.(gofs.FileFsyncdirer); ok {
		return s.Fsyncdir(ctx, flags)
	}
	return syscall.ENOTSUP
}

func (d dirStream) Releasedir(ctx context.Context, flags uint32) {
	if r, ok := d.FileHandle.(gofs.FileReleasedirer); ok {
		r.Releasedir(ctx, flags)
	}
}
