package fs

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/fs/content"
	"github.com/mfm-project/mfm/internal/fanotify"
)

// Options configure a mount.
type Options struct {
	// ReadOnly makes mine/ read-only too (evaluation runs where the
	// memory must stay frozen).
	ReadOnly bool
	// Debug logs every FUSE request (very verbose).
	Debug bool
	// Logger receives the daemon's diagnostics; nil means slog.Default().
	Logger *slog.Logger
	// ReadDirPlus negotiates READDIRPLUS_AUTO (attributes with the
	// listed entries when the lister stats them) on the store's mount,
	// where episodes/ is with PerOpen. The mounts of episodes/ and
	// previous/ of their own always have it. Off by default: see
	// docs/MOUNT.md for measurements.
	ReadDirPlus bool
	// RenderTimeout bounds one view render or query; 0 means 10 s.
	RenderTimeout time.Duration
	// NoAccessLog turns off store/.mfm/access.jsonl.
	NoAccessLog bool
	// PanicHandler, if set, is called with a recovered handler panic
	// (the request then fails with EIO). Tests use it to fail loudly.
	PanicHandler func(any)
	// Hooks are the query, view, consolidation and catalog services
	// (see hooks.go).
	Hooks Hooks
	// PerOpen serves episodes/ and previous/ like the rest of the
	// mount: every open of a file is a request to the daemon (OPEN,
	// answered with the backing file for kernel passthrough), as a mount
	// without root always does. Off (as root), episodes/ and previous/
	// are mounts of their own, read-only superblocks that never see an
	// open: the kernel reads their files through its page cache, a
	// repeated read costs no request at all, and opens reach the access
	// log through fanotify (docs/MOUNT.md, "The recorded episodes: read
	// through the kernel's cache").
	PerOpen bool
	// Turn, if set, labels every access log row with the play session's
	// current turn (content.AccessLog.SetTurn); it must not block.
	Turn func() string
	// Ablation hides parts of the memory (evaluation ablations, ablation.go).
	Ablation Ablation
}

// debugLogger, when set (by tests), receives go-fuse's request log of
// mounts with Options.Debug instead of the standard logger.
var debugLogger *log.Logger

// Server is a mounted store.
type Server struct {
	srv      *fuse.Server
	subs     []*subMount // episodes/ and previous/ when read through the kernel's cache
	m        *mfs
	mnt      string
	waitOnce sync.Once
	done     chan struct{}
	// unmountMu serializes the go-fuse servers' Unmount calls (Unmount and
	// Wait both make them; go-fuse's Unmount is idempotent, not safe for
	// concurrent calls).
	unmountMu sync.Mutex
}

// mfs is the state of one mount: what the node kinds share (nodeEnv),
// the options and hooks, and the root's entries. Node kinds that need
// only the shared part hold a *nodeEnv instead.
type mfs struct {
	*nodeEnv
	store *episodes.Store
	opt   Options
	stats *content.StatsCache
	views *views
	ro    *roEnv // what the read-only trees share
	// queries is q/'s query cache (nil without a Querier).
	queries *content.QueryCache

	rootOps    map[string]gofs.InodeEmbedder
	root       []rootEntry // rootTable plus Hooks.Trees
	episodes   *roNode     // episodes/'s tree
	previous   *vdir       // previous/'s tree
	lives      *lifeTrees
	stop       chan struct{}
	mountpoint string
}

// Mount mounts store at mountpoint and serves it until Unmount (or an
// external umount). A stale mount left by a killed daemon ("transport
// endpoint is not connected") is cleared first. As root it mounts
// directly (no fusermount); otherwise it needs fusermount3 in PATH.
//
// Mount sets the process umask to 0: modes of files created in mine/ are
// then exactly what the caller asked for (the caller's umask was applied
// by its kernel already).
func Mount(ctx context.Context, store *episodes.Store, mountpoint string, opt Options) (*Server, error) {
	mnt, err := filepath.Abs(mountpoint)
	if err != nil {
		return nil, fmt.Errorf("mount %s: %w", mountpoint, err)
	}
	if err := prepareMountpoint(mnt); err != nil {
		return nil, err
	}
	asRoot := os.Geteuid() == 0
	if !asRoot {
		if _, err := fusermount(); err != nil {
			return nil, fmt.Errorf("mount %s: not root and fusermount3 not found in PATH: install the fuse3 package (apt-get install fuse3) or run mfmd as root", mnt)
		}
	}
	if opt.RenderTimeout <= 0 {
		opt.RenderTimeout = 10 * time.Second
	}
	syscall.Umask(0)

	m := newMFS(store, mnt, opt, asRoot)
	rootDir, err := m.buildRoot()
	if err != nil {
		m.access.Close()
		return nil, fmt.Errorf("mount %s: %w", mnt, err)
	}
	mo := m.mountOptions(asRoot)
	s, err := m.serve(rootDir, mo)
	if err != nil {
		m.access.Close()
		if !asRoot {
			// go-fuse's error ends in a newline; fusermount3 printed its
			// own message on stderr already.
			return nil, fmt.Errorf("mount %s: %s (without root, fusermount3 mounts: it must be able to open /dev/fuse, see docs/MOUNT.md)", mnt, strings.TrimSpace(err.Error()))
		}
		return nil, fmt.Errorf("mount %s: %w", mnt, err)
	}
	if m.cached {
		if err := s.mountCachedTrees(mo); err != nil {
			s.abandon()
			return nil, fmt.Errorf("mount %s: %w", mnt, err)
		}
	}
	go m.watchLives()
	go releaseIdleMemory(m.stop, releaseEvery, releaseAbove, m.log)
	m.log.Info("mounted", slog.String("store", store.Root), slog.String("mountpoint", mnt), slog.Bool("read_only_mine", opt.ReadOnly), slog.Bool("episodes_cached", m.cached))
	return s, nil
}

// newMFS makes the state shared by the nodes of a mount of store at mnt.
// As root and without Options.PerOpen, episodes/ and previous/ are read
// through the kernel's cache if the access log can learn of their opens
// (fanotify) or is off.
func newMFS(store *episodes.Store, mnt string, opt Options, asRoot bool) *mfs {
	log := opt.Logger
	if log == nil {
		log = slog.Default()
	}
	opt = opt.Ablation.options(opt)
	m := &mfs{
		nodeEnv: &nodeEnv{
			log:     log,
			errs:    content.NewErrorLog(32),
			started: time.Now(),
		},
		store:      store,
		opt:        opt,
		rootOps:    map[string]gofs.InodeEmbedder{},
		stop:       make(chan struct{}),
		mountpoint: mnt,
	}
	m.uid, m.gid = storeOwner(store.Root)
	if asRoot && !opt.PerOpen {
		if opt.NoAccessLog {
			m.cached = true
		} else if err := fanotify.Available(); err != nil {
			log.Warn("mount: fanotify unavailable, so every open of an episode file goes through the daemon (slower reads) to keep the access log complete", slog.Any("err", err))
		} else {
			m.cached = true
		}
	}
	m.stats = content.NewStatsCache(store)
	m.views = newViews(m.nodeEnv, opt.Hooks.Viewer, opt.RenderTimeout)
	m.ro = &roEnv{nodeEnv: m.nodeEnv, views: m.views, citedBy: opt.Hooks.CitedBy, timeout: opt.RenderTimeout, ablation: opt.Ablation}
	m.access = accessRecorder{content.NewAccessLog(store, log, opt.NoAccessLog)}
	m.access.SetTurn(opt.Turn)
	m.lives = &lifeTrees{m: m, trees: map[int]*roNode{}}
	return m
}

// mountOptions are the FUSE options of the store's mount.
func (m *mfs) mountOptions(asRoot bool) fuse.MountOptions {
	opt := m.opt
	mo := fuse.MountOptions{
		FsName:             "mfm:" + m.store.Root,
		Name:               "mfm",
		DirectMountStrict:  asRoot,
		EnableLocks:        true,
		DisableReadDirPlus: !opt.ReadDirPlus,
		Debug:              opt.Debug,
		MaxReadAhead:       1 << 20,
		MaxWrite:           1 << 20,
	}
	if opt.ReadDirPlus {
		// Let the kernel choose per listing: attributes with the first
		// batch of each listing, and with the rest only when the lister
		// stats the entries (ls -l) rather than just reading names (ls).
		mo.ExtraCapabilities |= fuse.CAP_READDIRPLUS_AUTO
	}
	if asRoot {
		// The agent may run as another user: let it in, and let the
		// kernel check permissions against the modes we report.
		mo.AllowOther = true
		mo.Options = append(mo.Options, "default_permissions")
	}
	if opt.Debug && debugLogger != nil {
		mo.Logger = debugLogger
	}
	mo.PanicHandler = func(p any) fuse.Status {
		m.log.Error("mount: handler panic", slog.Any("panic", p))
		if opt.PanicHandler != nil {
			opt.PanicHandler(p)
		}
		return fuse.EIO
	}
	return mo
}

// serve mounts the tree under rootDir at the mount point with mo and
// serves it from goroutines of its own.
func (m *mfs) serve(rootDir *vdir, mo fuse.MountOptions) (*Server, error) {
	fsOpts := &gofs.Options{
		MountOptions:    mo,
		NullPermissions: true,
		RootStableAttr:  &gofs.StableAttr{Ino: 1},
		OnAdd:           func(ctx context.Context) { m.addRootChildren(ctx, rootDir) },
	}
	raw := gofs.NewNodeFS(rootDir, fsOpts)
	srv, err := fuse.NewServer(raw, m.mountpoint, &fsOpts.MountOptions)
	if err != nil {
		return nil, err
	}
	go srv.Serve()
	if err := srv.WaitMount(); err != nil {
		_ = srv.Unmount()
		return nil, err
	}
	return &Server{srv: srv, m: m, mnt: m.mountpoint, done: make(chan struct{})}, nil
}

// mountCachedTrees mounts episodes/ and previous/ as mounts of their own
// (cachedmount.go) over their names in the store's mount.
func (s *Server) mountCachedTrees(mo fuse.MountOptions) error {
	m := s.m
	for _, t := range []struct {
		name string
		root gofs.InodeEmbedder
	}{{episodes.EpisodesDir, m.episodes}, {episodes.PreviousDir, m.previous}} {
		sub, err := m.mountCached(t.name, t.root, mo)
		if err != nil {
			return err
		}
		s.subs = append(s.subs, sub)
	}
	return nil
}

// abandon undoes a mount that failed after the store's mount was made:
// the watchers stop, everything is unmounted (detached lazily if busy)
// and the access log is closed, so Mount returns with nothing running.
func (s *Server) abandon() {
	if err := s.Unmount(); err != nil {
		s.m.log.Warn("mount failed, and so did its unmount", slog.String("mountpoint", s.mnt), slog.Any("err", err))
	}
	s.m.access.Close()
}

// Mountpoint returns the absolute mount point.
func (s *Server) Mountpoint() string { return s.mnt }

// Unmount unmounts the filesystem (the mounts of episodes/ and previous/
// first, when they have their own). If it is busy it retries for about a
// second, then detaches lazily (MNT_DETACH, which takes them along): open descriptors keep
// working and Wait returns when the last one is closed.
func (s *Server) Unmount() error {
	// A watcher may hold an event's descriptor on its mount, which would
	// make the unmount busy.
	s.closeWatchers()
	var err error
	for i := 0; i < 10; i++ {
		if err = s.unmountAll(); err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EBUSY) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.m.log.Warn("unmount: busy, detaching lazily", slog.String("mountpoint", s.mnt), slog.Any("err", err))
	if derr := detach(s.mnt); derr != nil {
		return fmt.Errorf("unmount %s: %w (lazy detach: %v)", s.mnt, err, derr)
	}
	return nil
}

// unmountAll unmounts episodes/ and previous/, if they are mounts of
// their own, then the store's mount.
func (s *Server) unmountAll() error {
	s.unmountMu.Lock()
	defer s.unmountMu.Unlock()
	for _, sub := range s.subs {
		if err := sub.srv.Unmount(); err != nil && !errors.Is(err, syscall.EINVAL) { // EINVAL: not mounted (any more)
			return err
		}
	}
	return s.srv.Unmount()
}

// closeWatchers stops the access log's fanotify watchers (after the
// events they had queued are written).
func (s *Server) closeWatchers() {
	for _, sub := range s.subs {
		if sub.opens != nil {
			_ = sub.opens.Close()
		}
	}
}

// Wait blocks until the filesystem is unmounted and the server has
// stopped, then flushes the access log.
func (s *Server) Wait() {
	s.srv.Wait()
	for _, sub := range s.subs {
		// Gone with the store's mount (a lazy detach takes them along),
		// or still mounted over a mountpoint nobody can reach: unmount.
		s.unmountMu.Lock()
		_ = sub.srv.Unmount()
		s.unmountMu.Unlock()
		sub.srv.Wait()
	}
	s.waitOnce.Do(func() {
		s.closeWatchers()
		close(s.m.stop)
		s.m.access.Close()
		close(s.done)
	})
	<-s.done
}

// detach lazily unmounts mnt (umount -l).
func detach(mnt string) error {
	if os.Geteuid() == 0 {
		return syscall.Unmount(mnt, syscall.MNT_DETACH)
	}
	bin, err := fusermount()
	if err != nil {
		return err
	}
	if out, err := exec.Command(bin, "-u", "-z", mnt).CombinedOutput(); err != nil {
		return fmt.Errorf("%s -u -z: %w: %s", bin, err, out)
	}
	return nil
}

// fusermount returns the path of fusermount3 (or fusermount), which
// mounts and unmounts FUSE filesystems without root.
func fusermount() (string, error) {
	bin, err := exec.LookPath("fusermount3")
	if err != nil {
		if bin, err = exec.LookPath("fusermount"); err != nil {
			return "", fmt.Errorf("fusermount3 not found in PATH")
		}
	}
	return bin, nil
}

// prepareMountpoint checks that mnt is a directory ready to be mounted
// on. A stale FUSE mount (stat fails with ENOTCONN: its daemon died) is
// detached first; a live mount is an error.
func prepareMountpoint(mnt string) error {
	// statfs always reaches a FUSE daemon; stat may be answered from the
	// kernel's attribute cache for a second after the daemon died.
	st, err := statBounded(mnt, true)
	if errors.Is(err, syscall.ENOTCONN) || errors.Is(err, syscall.ECONNABORTED) {
		slog.Warn("mountpoint: clearing stale mount (transport endpoint is not connected)", slog.String("mountpoint", mnt))
		if derr := detach(mnt); derr != nil {
			return fmt.Errorf("mountpoint %s is a stale mount and could not be cleared: %w (try: umount -l %s)", mnt, derr, mnt)
		}
		st, err = statBounded(mnt, false)
	}
	if err != nil {
		return fmt.Errorf("mountpoint %s: %w", mnt, err)
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		return fmt.Errorf("mountpoint %s: not a directory", mnt)
	}
	if pst, err := statBounded(filepath.Dir(mnt), false); err == nil && pst.Dev != st.Dev && mnt != "/" {
		return fmt.Errorf("mountpoint %s: something is already mounted there (unmount it first: umount %s)", mnt, mnt)
	}
	return nil
}

// mountpointWait bounds how long Mount waits for its mount point to
// answer stat: on a FUSE mount whose daemon hangs, stat never returns.
var mountpointWait = 5 * time.Second

// statBounded stats p (after a statfs, with withStatfs) from a goroutine
// of its own and gives up after mountpointWait. The goroutine of a stat
// that never returns is left blocked; it acts on nothing.
func statBounded(p string, withStatfs bool) (syscall.Stat_t, error) {
	type result struct {
		st  syscall.Stat_t
		err error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		if withStatfs {
			var sfs syscall.Statfs_t
			r.err = syscall.Statfs(p, &sfs)
		}
		if r.err == nil {
			r.err = syscall.Stat(p, &r.st)
		}
		done <- r
	}()
	t := time.NewTimer(mountpointWait)
	defer t.Stop()
	select {
	case r := <-done:
		return r.st, r.err
	case <-t.C:
		return syscall.Stat_t{}, fmt.Errorf("does not answer within %v: a FUSE mount whose daemon hangs? (detach it: umount -l %s)", mountpointWait, p)
	}
}
