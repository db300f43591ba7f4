package fs

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mfm-project/mfm/episodes"
)

// rootEntry is one name at the top of the mount.
//
// The extension point: a feature that needs a top-level virtual file or
// directory writes one small file in this package with a constructor
// func(*mfs) (gofs.InodeEmbedder, error) — usually a *vdir or *bytesFile
// from vnodes.go — and adds one line to rootTable. Constructors run once
// at mount time; the nodes they return are persistent.
type rootEntry struct {
	name   string
	hidden bool   // resolves on lookup but is not listed by readdir
	mode   uint32 // fuse.S_IFDIR, S_IFREG or S_IFLNK
	new    func(m *mfs) (gofs.InodeEmbedder, error)
}

// rootTable is the layout of the mount's root, in listing order.
var rootTable = []rootEntry{
	{name: "README.md", mode: fuse.S_IFREG, new: newReadmeFile},
	{name: episodes.LogFileName, mode: fuse.S_IFREG, new: recordFile("log", episodes.LogFileName)},
	{name: episodes.IndexFileName, mode: fuse.S_IFREG, new: recordFile("index", episodes.IndexFileName)},
	{name: episodes.GridFileName, mode: fuse.S_IFREG, new: recordFile("grid", episodes.GridFileName)},
	{name: episodes.EpisodesDir, mode: fuse.S_IFDIR, new: newEpisodesDir},
	{name: episodes.PreviousDir, mode: fuse.S_IFDIR, new: newPreviousDir},
	{name: episodes.MineDir, mode: fuse.S_IFDIR, new: newMineDir},
	{name: episodes.NowDir, mode: fuse.S_IFDIR, new: newNowDir},
	{name: "q", mode: fuse.S_IFDIR, new: newQueryRoot},
	{name: "map", mode: fuse.S_IFDIR, new: newMapDir},
	{name: ".errors", hidden: true, mode: fuse.S_IFREG, new: newErrorsFile},
}

// buildRoot constructs every root entry and the root directory itself.
func (m *mfs) buildRoot() (*vdir, error) {
	base := m.ablateRoot(append([]rootEntry(nil), rootTable...))
	for _, e := range base {
		ops, err := e.new(m)
		if err != nil {
			return nil, fmt.Errorf("build /%s: %w", e.name, err)
		}
		m.rootOps[e.name] = ops
	}
	m.root = append(base, m.treeRootEntries()...)
	for _, e := range m.root[len(base):] {
		ops, err := e.new(m)
		if err != nil {
			return nil, fmt.Errorf("build /%s: %w", e.name, err)
		}
		m.rootOps[e.name] = ops
	}
	root := &vdir{env: m.nodeEnv, attrTTL: dirAttrTTL, entryTTL: rootEntryTTL}
	root.lookup = func(ctx context.Context, name string) (gofs.InodeEmbedder, uint32, syscall.Errno) {
		// Children were added in OnAdd; the bridge finds them by name.
		return nil, 0, syscall.ENOENT
	}
	root.list = func(ctx context.Context) ([]fuse.DirEntry, syscall.Errno) {
		var out []fuse.DirEntry
		for _, e := range m.root {
			if e.hidden {
				continue
			}
			out = append(out, fuse.DirEntry{Name: e.name, Mode: e.mode, Ino: virtualIno(1, e.name)})
		}
		return out, 0
	}
	return root, nil
}

// addRootChildren runs in OnAdd: it makes every root entry a persistent
// child of the root.
func (m *mfs) addRootChildren(ctx context.Context, root *vdir) {
	for _, e := range m.root {
		ops := m.rootOps[e.name]
		ino := virtualIno(1, e.name)
		ch := root.NewPersistentInode(ctx, ops, gofs.StableAttr{Mode: e.mode, Ino: ino})
		root.AddChild(e.name, ch, true)
	}
	// The root's own lookup consults the children added here.
	root.lookup = func(ctx context.Context, name string) (gofs.InodeEmbedder, uint32, syscall.Errno) {
		ch := root.GetChild(name)
		if ch == nil {
			return nil, 0, syscall.ENOENT
		}
		return ch.Operations(), ch.StableAttr().Mode, 0
	}
}

// recordFile serves one of the current life's growing record files.
func recordFile(kind, name string) func(m *mfs) (gofs.InodeEmbedder, error) {
	return func(m *mfs) (gofs.InodeEmbedder, error) {
		p := m.store.Path(name)
		return &proxyFile{env: m.nodeEnv, kind: kind, resolve: func() (string, error) { return p, nil }}, nil
	}
}

func newEpisodesDir(m *mfs) (gofs.InodeEmbedder, error) {
	dir := m.store.Path(episodes.EpisodesDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		// A store we may not write to: only a missing directory is fatal.
		if _, serr := os.Stat(dir); serr != nil {
			return nil, err
		}
	}
	n, err := m.ro.newROTree(dir, saltEpisodes, immutableTTL, "episode")
	if err != nil {
		return nil, err
	}
	n.ttl = dirAttrTTL
	m.episodes = n
	m.episodesRoot = n.EmbeddedInode()
	if m.cached {
		// The mount point of episodes/'s own mount (mountCached).
		return &vdir{env: m.nodeEnv, attrTTL: dirAttrTTL}, nil
	}
	return n, nil
}

func newMineDir(m *mfs) (gofs.InodeEmbedder, error) {
	dir := m.store.Path(episodes.MineDir)
	if !m.opt.ReadOnly {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		return m.newMineTree(dir)
	}
	if _, err := os.Stat(dir); err != nil {
		return &vdir{env: m.nodeEnv}, nil // read-only and absent: an empty directory
	}
	return m.ro.newROTree(dir, saltMine, 0, "note")
}

// lifeTrees serves previous/: one read-only tree per previous/life_N,
// created on first lookup, so lives that appear while mounted show up.
type lifeTrees struct {
	m     *mfs
	mu    sync.Mutex
	trees map[int]*roNode
}

func newPreviousDir(m *mfs) (gofs.InodeEmbedder, error) {
	lt := m.lives
	d := &vdir{env: m.nodeEnv, attrTTL: dirAttrTTL, entryTTL: rootEntryTTL}
	d.lookup = func(ctx context.Context, name string) (gofs.InodeEmbedder, uint32, syscall.Errno) {
		n, ok := episodes.ParseLifeName(name)
		if !ok {
			return nil, 0, syscall.ENOENT
		}
		t, errno := lt.tree(n)
		if errno != 0 {
			return nil, 0, errno
		}
		return t, fuse.S_IFDIR, 0
	}
	d.list = func(ctx context.Context) ([]fuse.DirEntry, syscall.Errno) {
		lives, err := m.store.PreviousLives()
		if err != nil {
			return nil, m.fail(ctx, "/previous", err)
		}
		out := make([]fuse.DirEntry, 0, len(lives))
		for _, l := range lives {
			name := episodes.LifeName(l.N)
			out = append(out, fuse.DirEntry{Name: name, Mode: fuse.S_IFDIR, Ino: virtualIno(d.StableAttr().Ino, name)})
		}
		return out, 0
	}
	m.previous = d
	m.previousRoot = d.EmbeddedInode()
	if m.cached {
		// The mount point of previous/'s own mount (mountCached).
		return &vdir{env: m.nodeEnv, attrTTL: dirAttrTTL}, nil
	}
	return d, nil
}

func (lt *lifeTrees) tree(n int) (*roNode, syscall.Errno) {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	if t, ok := lt.trees[n]; ok {
		return t, 0
	}
	dir := lt.m.store.Path(episodes.PreviousDir, episodes.LifeName(n))
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return nil, syscall.ENOENT
	}
	t, err := lt.m.ro.newROTree(dir, uint64(16+n), immutableTTL, "episode")
	if err != nil {
		return nil, gofs.ToErrno(err)
	}
	t.ttl = immutableTTL // a frozen life never changes
	t.life = episodes.PreviousDir + "/" + episodes.LifeName(n) + "/"
	lt.trees[n] = t
	return t, 0
}

// watchLives notices a new life (episodes/ replaced by a fresh directory)
// and drops the kernel's cached entries under /episodes, from its own
// goroutine: Notify calls inside a handler would deadlock.
func (m *mfs) watchLives() {
	ino := func() uint64 {
		var st syscall.Stat_t
		if syscall.Stat(m.store.Path(episodes.EpisodesDir), &st) != nil {
			return 0
		}
		return st.Ino
	}
	last := ino()
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
		}
		cur := ino()
		if cur == last {
			continue
		}
		last = cur
		m.log.Info("mount: new life detected; invalidating /episodes entries")
		ep := m.episodes.EmbeddedInode()
		for name := range ep.Children() {
			if errno := ep.NotifyEntry(name); errno != 0 && errno != syscall.ENOENT {
				m.log.Debug("mount: notify entry", slog.String("name", name), slog.Any("errno", errno))
			}
		}
		m.stats.Invalidate()
	}
}
