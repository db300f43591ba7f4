package fs

import (
	"context"
	"os"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// treeFile is a file of a VirtualTree served from a local file
// (VirtualFileOpener): getattr sizes it by the tree's Stat, open takes
// the file and the size to serve at that moment, and reads come from the
// file up to that size, so a file of hundreds of megabytes costs no more
// memory than a read.
type treeFile struct {
	statFile
	open func(ctx context.Context) (*os.File, int64, bool, error)
}

var (
	_ = (gofs.NodeOpener)((*treeFile)(nil))
	_ = (gofs.NodeReader)((*treeFile)(nil))
	_ = (gofs.NodeGetattrer)((*treeFile)(nil))
)

// treeFileHandle is an open treeFile: the file and the bytes it serves.
type treeFileHandle struct {
	f    *os.File
	size int64
}

var (
	_ = (gofs.FileReleaser)((*treeFileHandle)(nil))
	_ = (gofs.FileReader)((*treeFileHandle)(nil))
)

func (f *treeFile) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if h, ok := fh.(*treeFileHandle); ok {
		out.SetTimeout(f.ttl)
		f.env.virtualAttr(&out.Attr, fuse.S_IFREG|0o444, uint64(h.size))
		return 0
	}
	return f.statFile.Getattr(ctx, fh, out)
}

func (f *treeFile) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	if writeMode(flags) {
		return nil, 0, syscall.EROFS
	}
	p := "/" + f.env.storePath(&f.Inode)
	file, size, ok, err := f.open(ctx)
	if err != nil {
		return nil, 0, f.env.fail(ctx, p, err)
	}
	if !ok {
		return f.statFile.Open(ctx, flags)
	}
	f.env.access.record(ctx, p, f.kind)
	// Direct I/O: the kernel asks for every read and stops at the
	// handle's end, whatever size it last saw (the file grows).
	return &treeFileHandle{f: file, size: size}, fuse.FOPEN_DIRECT_IO | fuse.FOPEN_NOFLUSH, 0
}

func (f *treeFile) Read(ctx context.Context, fh gofs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if h, ok := fh.(*treeFileHandle); ok {
		return h.Read(ctx, dest, off)
	}
	return f.statFile.Read(ctx, fh, dest, off)
}

func (h *treeFileHandle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if off >= h.size {
		return fuse.ReadResultData(nil), 0
	}
	n, err := h.f.ReadAt(dest[:min(int64(len(dest)), h.size-off)], off)
	if err != nil && n == 0 {
		return nil, gofs.ToErrno(err)
	}
	return fuse.ReadResultData(dest[:n]), 0
}

func (h *treeFileHandle) Release(ctx context.Context) syscall.Errno {
	h.f.Close()
	return 0
}
