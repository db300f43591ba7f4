package fs

import (
	"context"
	"strings"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mfm-project/mfm/episodes"
)

// The kernel's cache of listings (FOPEN_CACHE_DIR). In the mounts read
// through the kernel's cache (cachedmount.go) the kernel may keep the
// listing of a directory and serve the next getdents(2) of it from its
// page cache instead of asking the daemon: a warm `ls -l episodes/` then
// costs an OPENDIR and a RELEASEDIR, not one READDIR(PLUS) request per
// batch of entries, each looking its entries up again.
//
// The directory must not change behind the cached copy: episodes/ grows
// while the harness records. So each OPENDIR (which still reaches the
// daemon: go-fuse's listings need the handle it makes) stats the backing
// directory first and lets the kernel reuse what it holds only if the
// directory is unchanged since the listing the kernel cached. Otherwise
// the answer carries no cache flags: the kernel then drops its copy and
// lists through the daemon, as without the cache, and the next listing
// fills a fresh copy. A directory modified less than listingQuiet ago is
// never cached: a timestamp is only as fine as the filesystem's clock
// tick, and two changes within one tick would look like none.
//
// The kernel caches names only. A listing read by a lister that does not
// stat its entries (plain ls, find) gets attributes with its first batch
// only (READDIRPLUS_AUTO); a copy filled by it on a fresh mount would
// leave the next `ls -l` one LOOKUP per entry.
// listedDir notes entries that went out with neither attributes nor a
// node in the kernel, and the next OPENDIR drops such a copy.
//
// Inside an episode (its directory and those below it) listings carry
// names only, as READDIR would: the kernel looks an entry up when
// something asks for it. There a listing is small and an `ls -l` costs a
// few LOOKUPs, while a `find episodes/` lists every episode, and the
// attributes of all their files would make the daemon look up (and the
// kernel keep an inode of) every file of the record, costing time and
// memory (bench/mount.md, find over the episodes). Their listings are
// kept by the kernel like the others: cited-by, the one virtual entry
// there, is always listed.

// listingQuiet is how long a directory must have been left unchanged
// before the kernel may cache its listing (a variable for tests).
var listingQuiet = time.Second

// dirStamp identifies one version of a directory's content.
type dirStamp struct {
	ino, nlink   uint64
	size         int64
	mtime, ctime syscall.Timespec
}

// lacksAttrs marks a cached listing some of whose entries went out
// without attributes.
var lacksAttrs = &dirStamp{}

// listingFlags returns the open flags of an OPENDIR of n (FOPEN_CACHE_DIR
// and FOPEN_KEEP_CACHE when the kernel may keep or fill its cached
// listing, 0 when it must drop it) and, with the flags, the version the
// kernel may cache. Call it before the listing's handle is opened (the
// stamp must not be newer than what the handle lists).
func (n *roNode) listingFlags() (uint32, *dirStamp) {
	if !n.env.inCachedTree(&n.Inode) {
		return 0, nil
	}
	var st syscall.Stat_t
	if err := syscall.Stat(n.backingPath(), &st); err != nil {
		return 0, nil
	}
	s := dirStamp{ino: st.Ino, nlink: uint64(st.Nlink), size: st.Size, mtime: st.Mtim, ctime: st.Ctim}
	changed := time.Unix(s.mtime.Unix())
	if c := time.Unix(s.ctime.Unix()); c.After(changed) {
		changed = c
	}
	const cache = fuse.FOPEN_CACHE_DIR | fuse.FOPEN_KEEP_CACHE
	n.env.listMu.Lock()
	defer n.env.listMu.Unlock()
	switch {
	case time.Since(changed) < listingQuiet, n.listed == lacksAttrs:
		n.listed = nil // the kernel drops its copy at this open
		return 0, nil
	case n.listed == nil:
		n.listed = &s // the kernel holds nothing: it fills a copy of s (or newer)
		return cache, n.listed
	case *n.listed == s:
		return cache, n.listed
	default:
		n.listed = nil
		return 0, nil
	}
}

// listedDir wraps the handle of a listing opened with the cache flags.
// It notes entries it lists that the kernel has no node for and that do
// not get their attributes with the listing (READDIR, not READDIRPLUS:
// go-fuse calls Lookup for each entry of a READDIRPLUS), and at release
// marks the kernel's copy as lacking attributes if there were any.
// go-fuse calls a handle's methods one request at a time.
type listedDir struct {
	dirStream
	n       *roNode
	stamp   *dirStamp
	names   bool // inside an episode: names only, no attributes
	pending bool // the last entry listed had no node and has not been looked up
	bare    int  // entries that went out without attributes and without a node
	lookups int  // READDIRPLUS lookups so far
	ahead   *statAhead
}

// inEpisode reports whether n is an episode directory or below one.
func (n *roNode) inEpisode() bool {
	parts := strings.Split(n.env.storePath(&n.Inode), "/")
	for i := 1; i < len(parts); i++ {
		if parts[i-1] == episodes.EpisodesDir {
			if _, ok := episodes.ParseEpisodeID(parts[i]); ok {
				return true
			}
		}
	}
	return false
}

var (
	_ = (gofs.FileReaddirenter)((*listedDir)(nil))
	_ = (gofs.FileLookuper)((*listedDir)(nil))
	_ = (gofs.FileSeekdirer)((*listedDir)(nil))
	_ = (gofs.FileReleasedirer)((*listedDir)(nil))
	_ = (gofs.FileFsyncdirer)((*listedDir)(nil))
)

func (d *listedDir) settle() {
	if d.pending {
		d.bare++
		d.pending = false
	}
}

func (d *listedDir) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	d.settle()
	e, errno := d.dirStream.Readdirent(ctx)
	if !d.names && e != nil && e.Name != "." && e.Name != ".." && d.n.GetChild(e.Name) == nil {
		d.pending = true
	}
	return e, errno
}

// Lookup is the READDIRPLUS lookup of the entry just listed: the node's,
// or none inside an episode (an error here sends the entry without
// attributes: go-fuse leaves its node id 0, which the kernel skips).
func (d *listedDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	if d.names {
		return nil, syscall.EAGAIN
	}
	d.pending = false
	if l, ok := d.FileHandle.(gofs.FileLookuper); ok {
		return l.Lookup(ctx, name, out)
	}
	if d.lookups++; d.lookups == statAheadAfter {
		d.ahead = startStatAhead(d.n.backingPath())
		if statAheadStarted != nil {
			statAheadStarted(d.ahead)
		}
	}
	if d.ahead != nil && name != citedByName {
		if a, ok := d.ahead.take(name); ok {
			d.n.env.statAheadHits.Add(1)
			return d.n.lookupAhead(ctx, a, out), 0
		}
	}
	return d.n.Lookup(ctx, name, out)
}

func (d *listedDir) Releasedir(ctx context.Context, flags uint32) {
	d.dirStream.Releasedir(ctx, flags)
	if d.ahead != nil {
		d.ahead.stop()
	}
	d.settle()
	if d.bare > 0 {
		d.n.env.listMu.Lock()
		if d.n.listed == d.stamp {
			d.n.listed = lacksAttrs
		}
		d.n.env.listMu.Unlock()
	}
}
