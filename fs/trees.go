package fs

import (
	"context"
	"errors"
	iofs "io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mfm-project/mfm/fs/content"
)

// treeDirEntryTTL is the entry timeout of a tree's directories.
const treeDirEntryTTL = time.Second

// treeDir serves one directory of a Hooks.Trees VirtualTree.
func (m *mfs) treeDir(t VirtualTree, root, dir string) *vdir {
	// Directory entries are cached for a second (a directory under a tree
	// rarely goes away: a shared note's folder can), and so are those of
	// files sized by Stat (their attributes are still asked for each time,
	// so a removed one is missing at once); other files and missing names
	// are asked for every time, so a new episode shows at once.
	d := &vdir{env: m.nodeEnv, entryTTL: treeDirEntryTTL}
	call := func(ctx context.Context) (context.Context, context.CancelFunc) {
		return context.WithTimeout(ctx, m.opt.RenderTimeout)
	}
	d.lookup = func(ctx context.Context, name string) (gofs.InodeEmbedder, uint32, syscall.Errno) {
		p := path.Join(dir, name)
		cctx, cancel := call(ctx)
		_, isDir, sized, err := treeStat(cctx, t, p)
		cancel()
		if errors.Is(err, iofs.ErrNotExist) {
			return nil, 0, syscall.ENOENT
		}
		if err != nil {
			return nil, 0, m.fail(ctx, "/"+root+"/"+p, content.Invalid(err))
		}
		if isDir {
			return m.treeDir(t, root, p), fuse.S_IFDIR, 0
		}
		read := func(ctx context.Context) ([]byte, error) {
			cctx, cancel := call(ctx)
			defer cancel()
			b, _, err := t.Open(cctx, p)
			if err != nil && !errors.Is(err, iofs.ErrNotExist) {
				err = content.Invalid(err)
			}
			return b, err
		}
		if !sized {
			return &bytesFile{env: m.nodeEnv, kind: root, content: read}, fuse.S_IFREG, 0
		}
		stat := func(ctx context.Context) (int64, error) {
			cctx, cancel := call(ctx)
			defer cancel()
			size, _, _, err := treeStat(cctx, t, p)
			if err != nil && !errors.Is(err, iofs.ErrNotExist) {
				err = content.Invalid(err)
			}
			return size, err
		}
		if fo, ok := t.(VirtualFileOpener); ok {
			return &treeFile{statFile: statFile{bytesFile: bytesFile{env: m.nodeEnv, kind: root, content: read}, stat: stat}, open: func(ctx context.Context) (*os.File, int64, bool, error) {
				cctx, cancel := call(ctx)
				defer cancel()
				f, size, ok, err := fo.OpenFile(cctx, p)
				if err != nil && !errors.Is(err, iofs.ErrNotExist) {
					err = content.Invalid(err)
				}
				return f, size, ok, err
			}}, fuse.S_IFREG, 0
		}
		return &statFile{bytesFile: bytesFile{env: m.nodeEnv, kind: root, content: read}, stat: stat}, fuse.S_IFREG, 0
	}
	d.list = func(ctx context.Context) ([]fuse.DirEntry, syscall.Errno) {
		cctx, cancel := call(ctx)
		names, err := t.ReadDir(cctx, dir)
		cancel()
		if err != nil {
			return nil, m.fail(ctx, "/"+path.Join(root, dir), content.Invalid(err))
		}
		out := make([]fuse.DirEntry, 0, len(names))
		for _, n := range names {
			mode := uint32(fuse.S_IFREG)
			if strings.HasSuffix(n, "/") {
				n, mode = strings.TrimSuffix(n, "/"), fuse.S_IFDIR
			}
			out = append(out, fuse.DirEntry{Name: n, Mode: mode, Ino: virtualIno(d.StableAttr().Ino, n)})
		}
		return out, 0
	}
	return d
}

// treeStat sizes p with t's Stat when t has one and can (sized), else
// reads it with Open.
func treeStat(ctx context.Context, t VirtualTree, p string) (size int64, isDir, sized bool, err error) {
	if st, ok := t.(VirtualStatter); ok {
		size, isDir, err := st.Stat(ctx, p)
		if !errors.Is(err, errors.ErrUnsupported) {
			return size, isDir, err == nil && !isDir, err
		}
	}
	b, isDir, err := t.Open(ctx, p)
	return int64(len(b)), isDir, false, err
}

// statFile is a file of a VirtualTree sized by its Stat: getattr asks
// stat, and the bytes are produced only when the file is opened or read.
type statFile struct {
	bytesFile
	stat func(ctx context.Context) (int64, error)
}

var _ = (gofs.NodeGetattrer)((*statFile)(nil))

func (f *statFile) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if _, ok := fh.(*bytesHandle); ok {
		return f.bytesFile.Getattr(ctx, fh, out)
	}
	size, err := f.stat(ctx)
	if err != nil {
		return f.env.fail(ctx, "/"+f.env.storePath(&f.Inode), err)
	}
	out.SetTimeout(f.ttl)
	f.env.virtualAttr(&out.Attr, fuse.S_IFREG|0o444, uint64(size))
	return 0
}

// treeRootEntries are the root entries of Hooks.Trees, sorted by name;
// names that clash with the fixed layout are skipped.
func (m *mfs) treeRootEntries() []rootEntry {
	var out []rootEntry
	for _, n := range m.treeNames() {
		if n == "" || strings.Contains(n, "/") || m.rootOps[n] != nil {
			m.log.Warn("mount: tree name skipped (empty, nested or taken)", "name", n)
			continue
		}
		t, name := m.opt.Hooks.Trees[n], n
		out = append(out, rootEntry{name: name, mode: fuse.S_IFDIR, new: func(m *mfs) (gofs.InodeEmbedder, error) {
			return m.treeDir(t, name, ""), nil
		}})
	}
	return out
}

// treeNames are the names of Hooks.Trees, sorted.
func (m *mfs) treeNames() []string {
	names := make([]string, 0, len(m.opt.Hooks.Trees))
	for n := range m.opt.Hooks.Trees {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
