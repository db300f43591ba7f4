package fs

import (
	"context"
	"path"
	"strings"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mfm-project/mfm/episodes"
)

// citedByName is the virtual file in each episode directory listing the
// mine/ files that cite it (Hooks.CitedBy).
const citedByName = "cited-by"

// episodeDirRel returns the store-relative episode directory n is
// ("episodes/ep_000003", "previous/life_1/episodes/ep_000004"), or "".
func (n *roNode) episodeDirRel() string {
	rel := n.env.storePath(&n.Inode)
	dir, base := path.Split(rel)
	if _, ok := episodes.ParseEpisodeID(base); !ok {
		return ""
	}
	dir = strings.TrimSuffix(dir, "/")
	if dir == episodes.EpisodesDir || (strings.HasPrefix(dir, episodes.PreviousDir+"/") && strings.HasSuffix(dir, "/"+episodes.EpisodesDir)) {
		return rel
	}
	return ""
}

// citedByFile returns the cited-by node for episode directory n, or nil.
func (n *roNode) citedByFile() gofs.InodeEmbedder {
	hook := n.env.citedBy
	rel := n.episodeDirRel()
	if hook == nil || rel == "" {
		return nil
	}
	timeout := n.env.timeout
	return &bytesFile{env: n.env.nodeEnv, kind: "cited-by", content: func(ctx context.Context) ([]byte, error) {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return hook(ctx, rel)
	}}
}

// citedByDir wraps an episode directory's handle: after the backing
// entries it lists cited-by.
type citedByDir struct {
	inner gofs.FileHandle
	n     *roNode // the episode directory
	ino   uint64
	off   uint64 // entries returned since the last seek to 0
	extra bool   // cited-by returned
}

var _ = (gofs.FileLookuper)((*citedByDir)(nil))

// Lookup is the lookup of an entry of a READDIRPLUS listing (attributes
// sent with the listing). cited-by gets none: its content, and so its
// size, is computed from every citation in mine/ and every life's
// index (slow on a large index), and a listing must not compute it
// (`find episodes/` would have, for every episode). The kernel then
// looks it up only when something asks for it.
func (d *citedByDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	if name == citedByName {
		return nil, syscall.EAGAIN
	}
	return d.n.Lookup(ctx, name, out)
}

func (d *citedByDir) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	if r, ok := d.inner.(gofs.FileReaddirenter); ok {
		e, errno := r.Readdirent(ctx)
		if errno != 0 || e != nil {
			if e != nil {
				d.off++
				e.Off = d.off
			}
			return e, errno
		}
	}
	if d.extra {
		return nil, 0
	}
	d.extra = true
	d.off++
	return &fuse.DirEntry{Name: citedByName, Mode: fuse.S_IFREG, Ino: d.ino, Off: d.off}, 0
}

func (d *citedByDir) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	s, ok := d.inner.(gofs.FileSeekdirer)
	if !ok {
		return syscall.ENOTSUP
	}
	if off == 0 {
		d.off, d.extra = 0, false
		return s.Seekdir(ctx, 0)
	}
	if off > d.off { // past the backing entries: only cited-by may be left
		return 0
	}
	d.off, d.extra = off, false
	return s.Seekdir(ctx, off)
}

func (d *citedByDir) Releasedir(ctx context.Context, flags uint32) {
	if r, ok := d.inner.(gofs.FileReleasedirer); ok {
		r.Releasedir(ctx, flags)
	}
}
