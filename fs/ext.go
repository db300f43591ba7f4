package fs

import (
	"context"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// extensions holds the query index and the view renderer the mount wires
// in (q/, map/, views beside frames, episode sheets).
type extensions struct {
	m *mfs
}

func (m *mfs) openExtensions(ctx context.Context) error {
	m.ext = &extensions{m: m}
	return nil
}

func (e *extensions) close() {}

// help returns the grammar texts /.errors shows after the errors.
func (e *extensions) help() []string { return nil }

// lookupVirtual resolves a name that does not exist on disk inside a
// read-only store directory: a view of a frame or an episode sheet.
func (m *mfs) lookupVirtual(ctx context.Context, parent *gofs.Inode, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return nil, syscall.ENOENT
}

func newQueryRoot(m *mfs) (gofs.InodeEmbedder, error) { return &vdir{m: m}, nil }

func newMapDir(m *mfs) (gofs.InodeEmbedder, error) { return &vdir{m: m}, nil }

func (e *extensions) queries() bool     { return false }
func (e *extensions) views() bool       { return false }
func (e *extensions) queryHelp() string { return "" }
func (e *extensions) viewHelp() string  { return "" }
