package fs

import (
	"context"
	"log/slog"
	"os"
	"path"
	"sync/atomic"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/fs/content"
)

// nodeEnv is what every node kind needs from its mount: the owner and
// times of virtual nodes, the access and error logs, and where a node is
// (the store's mount, or episodes/'s or previous/'s own). The generic
// node kinds (vnodes.go) hold it instead of the whole mount state.
type nodeEnv struct {
	log     *slog.Logger
	access  accessRecorder
	errs    *content.ErrorLog
	uid     uint32
	gid     uint32
	started time.Time

	// cached: episodes/ and previous/ are mounts of their own, read
	// through the kernel's cache (Options.PerOpen off, as root), whose
	// trees have the roots episodesRoot and previousRoot.
	cached                     bool
	episodesRoot, previousRoot *gofs.Inode

	// virtualReads counts READ requests answered by virtual files (tests
	// use it to see that the kernel served a cached view itself).
	virtualReads atomic.Int64
}

// virtualAttr fills attributes of a virtual node: owner of the store,
// times of the mount.
func (e *nodeEnv) virtualAttr(a *fuse.Attr, mode uint32, size uint64) {
	a.Mode = mode
	a.Size = size
	a.Blocks = (size + 511) / 512
	a.Blksize = 4096
	a.Nlink = 1
	a.Uid, a.Gid = e.uid, e.gid
	t := e.started
	a.SetTimes(&t, &t, &t)
}

// fail records err for path in the error log (/.errors) and returns the
// errno the caller should answer with.
func (e *nodeEnv) fail(ctx context.Context, path string, err error) syscall.Errno {
	errno := content.Errno(err)
	if errno == syscall.EINTR {
		return errno // an interrupted request is retried, not the agent's error
	}
	e.errs.Add(path, err)
	e.log.Debug("mount: request failed", slog.String("path", path), slog.Any("err", err))
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

// storePath is n's path in the store's mount, without the leading slash
// ("episodes/ep_000001/action.json"), also for a node of episodes/'s or
// previous/'s own mount.
func (e *nodeEnv) storePath(n *gofs.Inode) string {
	return path.Join(e.cachedMountOf(n), n.Path(nil))
}

// inCachedTree reports whether n belongs to one of the mounts read
// through the kernel's cache (no opens: READ comes without a handle).
func (e *nodeEnv) inCachedTree(n *gofs.Inode) bool { return e.cachedMountOf(n) != "" }

// cachedMountOf is the name of the mount of its own that n belongs to
// (episodes or previous), or "" for the store's mount.
func (e *nodeEnv) cachedMountOf(n *gofs.Inode) string {
	if !e.cached {
		return ""
	}
	switch n.Root() {
	case e.episodesRoot:
		return episodes.EpisodesDir
	case e.previousRoot:
		return episodes.PreviousDir
	}
	return ""
}
