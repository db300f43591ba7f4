package fs

import (
	"fmt"
	"path/filepath"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mfm-project/mfm/internal/fanotify"
)

// The recorded episodes (episodes/, previous/) never change once
// written, and most reads of the memory are of their files: frames,
// states, actions, read again and again. As root (Options.PerOpen off)
// each of the two is a FUSE mount of its own over its name in the
// store's mount, served by this daemon:
//
//   - a read-only superblock: the kernel refuses every write itself, and
//     reads do not invalidate the cached atime (on a writable superblock
//     each re-read then cost a GETATTR);
//   - no opens: the first OPEN (and FLUSH) is answered ENOSYS, which tells
//     the kernel never to send OPEN, FLUSH or RELEASE again on that
//     connection. It then reads every file through its page cache and
//     asks the daemon only for pages it does not have (READ without a
//     handle: roNode.Read, bytesFile.Read), so a repeated read of a frame
//     sends the daemon nothing at all;
//   - the access log learns of the opens it no longer sees from fanotify
//     (internal/fanotify, a mount mark).
//
// Everything else (the growing index.jsonl, grid.jsonl and logs.txt,
// README.md, q/, map/, now/, mine/) stays on the store's mount with an
// OPEN per opened file: growing files keep kernel passthrough (with page
// caching, every append would drop their cached pages), and live virtual
// files a snapshot per open.

// watchOpens starts the fanotify watcher of a mount of its own (tests
// make it fail).
var watchOpens = fanotify.WatchOpens

// subMount is one of those mounts.
type subMount struct {
	srv   *fuse.Server
	mnt   string
	opens *fanotify.Watch // nil without the access log
}

// mountCached mounts the tree root (episodes/ or previous/) over name in
// the store's mount, which is already served by its own goroutines: the
// mount(2) resolves the mount point through it, and this goroutine holds
// none of the tree's locks that lookup could wait on.
func (m *mfs) mountCached(name string, root gofs.InodeEmbedder, outer fuse.MountOptions) (*subMount, error) {
	mnt := filepath.Join(m.mountpoint, name)
	mo := outer
	mo.FsName = "mfm:" + m.store.Path(name)
	mo.DirectMountFlags = syscall.MS_NOSUID | syscall.MS_NODEV | syscall.MS_RDONLY
	mo.EnableLocks = false // locks of read-only files are the kernel's own
	// Attributes with the first batch of each listing, and with the rest
	// when the lister stats the entries (ls -l; not ls or find): a cold
	// `ls -l episodes/` is then a few hundred READDIRPLUS requests, not
	// one LOOKUP per entry. Warm listings come from the kernel's cache
	// (listing.go), so READDIRPLUS does not look everything up again.
	mo.DisableReadDirPlus = false
	mo.ExtraCapabilities |= fuse.CAP_READDIRPLUS_AUTO
	opts := &gofs.Options{MountOptions: mo, NullPermissions: true}
	srv, err := fuse.NewServer(gofs.NewNodeFS(root, opts), mnt, &opts.MountOptions)
	if err != nil {
		return nil, fmt.Errorf("mount %s/: %w", name, err)
	}
	go srv.Serve()
	if err := srv.WaitMount(); err != nil {
		_ = srv.Unmount()
		return nil, fmt.Errorf("mount %s/: %w", name, err)
	}
	sub := &subMount{srv: srv, mnt: mnt}
	if m.access.On() {
		rec := &mountOpens{access: m.access.AccessLog, root: root.EmbeddedInode(), prefix: "/" + name, seen: make(map[string]accessName)}
		sub.opens, err = watchOpens(mnt, fanotify.Options{Log: m.log, FixedNames: true}, rec.record)
		if err != nil {
			_ = srv.Unmount()
			return nil, fmt.Errorf("%s/: access log: %w (mount with --per-open or --no-access-log)", name, err)
		}
	}
	return sub, nil
}
