package fs

import (
	"context"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// refuse answers every mutating call with EROFS. Virtual nodes embed it;
// without these methods go-fuse would answer ENOTSUP, and a directory
// without Unlink/Rmdir would let the kernel drop a child from the tree.
type refuse struct{}

var (
	_ = (gofs.NodeSetattrer)((*refuse)(nil))
	_ = (gofs.NodeCreater)((*refuse)(nil))
	_ = (gofs.NodeMkdirer)((*refuse)(nil))
	_ = (gofs.NodeMknoder)((*refuse)(nil))
	_ = (gofs.NodeUnlinker)((*refuse)(nil))
	_ = (gofs.NodeRmdirer)((*refuse)(nil))
	_ = (gofs.NodeRenamer)((*refuse)(nil))
	_ = (gofs.NodeLinker)((*refuse)(nil))
	_ = (gofs.NodeSymlinker)((*refuse)(nil))
	_ = (gofs.NodeSetxattrer)((*refuse)(nil))
	_ = (gofs.NodeRemovexattrer)((*refuse)(nil))
	_ = (gofs.NodeGetxattrer)((*refuse)(nil))
	_ = (gofs.NodeListxattrer)((*refuse)(nil))
	_ = (gofs.NodeTmpfiler)((*refuse)(nil))
	_ = (gofs.NodeAllocater)((*refuse)(nil))
)

func (refuse) Setattr(context.Context, gofs.FileHandle, *fuse.SetAttrIn, *fuse.AttrOut) syscall.Errno {
	return syscall.EROFS
}
func (refuse) Create(context.Context, string, uint32, uint32, *fuse.EntryOut) (*gofs.Inode, gofs.FileHandle, uint32, syscall.Errno) {
	return nil, nil, 0, syscall.EROFS
}
func (refuse) Mkdir(context.Context, string, uint32, *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}
func (refuse) Mknod(context.Context, string, uint32, uint32, *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}
func (refuse) Unlink(context.Context, string) syscall.Errno { return syscall.EROFS }
func (refuse) Rmdir(context.Context, string) syscall.Errno  { return syscall.EROFS }
func (refuse) Rename(context.Context, string, gofs.InodeEmbedder, string, uint32) syscall.Errno {
	return syscall.EROFS
}
func (refuse) Link(context.Context, gofs.InodeEmbedder, string, *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}
func (refuse) Symlink(context.Context, string, string, *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}
func (refuse) Setxattr(context.Context, string, []byte, uint32) syscall.Errno { return syscall.EROFS }
func (refuse) Removexattr(context.Context, string) syscall.Errno              { return syscall.EROFS }
func (refuse) Tmpfile(context.Context, uint32, uint32, *fuse.EntryOut) (*gofs.Inode, gofs.FileHandle, uint32, syscall.Errno) {
	return nil, nil, 0, syscall.EROFS
}
func (refuse) Allocate(context.Context, gofs.FileHandle, uint64, uint64, uint32) syscall.Errno {
	return syscall.EROFS
}

// Getxattr and Listxattr answer ENOSYS: the kernel then stops asking for
// the rest of the mount's life. MFM serves no extended attributes, and
// every `ls -l` entry would otherwise cost two GETXATTR round trips.
// (MountOptions.DisableXAttrs would do the same but also turn setxattr on
// read-only files into EOPNOTSUPP instead of EROFS.)
func (refuse) Getxattr(context.Context, string, []byte) (uint32, syscall.Errno) {
	return 0, syscall.ENOSYS
}
func (refuse) Listxattr(context.Context, []byte) (uint32, syscall.Errno) { return 0, syscall.ENOSYS }

// writeMode reports whether open flags ask for write access or truncation.
func writeMode(flags uint32) bool {
	return flags&syscall.O_ACCMODE != syscall.O_RDONLY || flags&syscall.O_TRUNC != 0
}
