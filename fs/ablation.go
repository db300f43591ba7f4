package fs

import (
	"context"
	"path"
	"slices"
	"strings"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mfm-project/mfm/episodes"
)

// Ablation hides parts of the memory from the agent, for the ablations
// of an evaluation (docs/EVAL.md, MFM Table 4). A hidden name is absent:
// it is not listed and looking it up gives ENOENT; the store is not
// changed. The zero value hides nothing.
type Ablation struct {
	// NoObservations hides what the agent saw: every frames/ and
	// observation/ directory of the episodes (episodes/, previous/), the
	// views (map/, the views beside frames) and now/ (the latest frame).
	NoObservations bool
	// Flat leaves only the chronological log: index.jsonl (the cues),
	// grid.jsonl, q/ and map/ are hidden; logs.txt, episodes/ and mine/
	// stay.
	Flat bool
	// NoProcedures hides mine/procedures/ (the agent's procedures).
	NoProcedures bool
}

// Active reports whether the ablation hides anything.
func (a Ablation) Active() bool { return a.NoObservations || a.Flat || a.NoProcedures }

// String names the switches that are on, comma-separated ("" for none).
func (a Ablation) String() string {
	var on []string
	if a.NoObservations {
		on = append(on, "no-observations")
	}
	if a.Flat {
		on = append(on, "flat")
	}
	if a.NoProcedures {
		on = append(on, "no-procedures")
	}
	return strings.Join(on, ",")
}

// readme is the README.md section saying what this mount hides (empty
// when it hides nothing), so that the README stays true of the mount.
func (a Ablation) readme() []byte {
	if !a.Active() {
		return nil
	}
	var b strings.Builder
	b.WriteString("\n## Hidden in this mount\n\nThis mount runs an evaluation ablation (" + a.String() + "): what the sections above describe of the following is not there.\n\n")
	if a.NoObservations {
		b.WriteString("- no observations: the episodes' frames/ and observation/ directories, the views (map/, the views beside frames) and now/\n")
	}
	if a.Flat {
		b.WriteString("- flat: index.jsonl, grid.jsonl, q/ and map/; the chronological log logs.txt, episodes/ and mine/ remain\n")
	}
	if a.NoProcedures {
		b.WriteString("- no procedures: mine/procedures/\n")
	}
	return []byte(b.String())
}

// rootHidden lists the root entries the ablation removes.
func (a Ablation) rootHidden() []string {
	var out []string
	if a.NoObservations {
		out = append(out, "map", episodes.NowDir)
	}
	if a.Flat {
		out = append(out, episodes.IndexFileName, episodes.GridFileName, "q", "map")
	}
	return out
}

// Hides reports whether the store-relative path rel is hidden below the
// root ("episodes/ep_000003/frames", "mine/procedures/x.py").
func (a Ablation) Hides(rel string) bool {
	parts := strings.Split(path.Clean(rel), "/")
	if a.NoProcedures && len(parts) >= 2 && parts[0] == episodes.MineDir && parts[1] == "procedures" {
		return true
	}
	if a.NoObservations && (parts[0] == episodes.EpisodesDir || parts[0] == episodes.PreviousDir) &&
		(slices.Contains(parts[1:], "frames") || slices.Contains(parts[1:], path.Dir(episodes.ObservationFileName))) {
		return true
	}
	return false
}

// options are the mount's options without the hooks the ablation
// hides: the views (no observations, flat) and the queries (flat).
func (a Ablation) options(opt Options) Options {
	if a.NoObservations || a.Flat {
		opt.Hooks.Viewer = nil
	}
	if a.Flat {
		opt.Hooks.Querier = nil
	}
	return opt
}

// ablateRoot removes the hidden root entries.
func (m *mfs) ablateRoot(entries []rootEntry) []rootEntry {
	hidden := m.opt.Ablation.rootHidden()
	return slices.DeleteFunc(entries, func(e rootEntry) bool { return slices.Contains(hidden, e.name) })
}

// hiddenChild reports whether name in the directory node dir is hidden.
func (e *nodeEnv) hiddenChild(a Ablation, dir *gofs.Inode, name string) bool {
	return a.Active() && a.Hides(path.Join(e.storePath(dir), name))
}

// hideListed wraps a directory handle of dir so that hidden names are
// not listed; fh is returned as it is when the ablation hides nothing.
func (e *nodeEnv) hideListed(a Ablation, dir *gofs.Inode, fh gofs.FileHandle) gofs.FileHandle {
	if !a.Active() || fh == nil {
		return fh
	}
	rel := e.storePath(dir)
	return &hidingDir{inner: fh, dir: dir, hide: func(name string) bool { return a.Hides(path.Join(rel, name)) }}
}

// hidingDir is a directory handle that skips hidden names.
type hidingDir struct {
	inner gofs.FileHandle
	dir   *gofs.Inode // the directory listed, for lookups of listed names
	hide  func(name string) bool
}

var (
	_ = (gofs.FileReaddirenter)((*hidingDir)(nil))
	_ = (gofs.FileLookuper)((*hidingDir)(nil))
	_ = (gofs.FileSeekdirer)((*hidingDir)(nil))
	_ = (gofs.FileReleasedirer)((*hidingDir)(nil))
	_ = (gofs.FileFsyncdirer)((*hidingDir)(nil))
)

func (d *hidingDir) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	r, ok := d.inner.(gofs.FileReaddirenter)
	if !ok {
		return nil, 0
	}
	for {
		e, errno := r.Readdirent(ctx)
		if errno != 0 || e == nil || !d.hide(e.Name) {
			return e, errno
		}
	}
}

func (d *hidingDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	if l, ok := d.inner.(gofs.FileLookuper); ok {
		return l.Lookup(ctx, name, out)
	}
	if l, ok := d.dir.Operations().(gofs.NodeLookuper); ok {
		return l.Lookup(ctx, name, out)
	}
	return nil, syscall.ENOENT
}

func (d *hidingDir) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	if s, ok := d.inner.(gofs.FileSeekdirer); ok {
		return s.Seekdir(ctx, off)
	}
	return syscall.ENOTSUP
}

func (d *hidingDir) Releasedir(ctx context.Context, flags uint32) {
	if r, ok := d.inner.(gofs.FileReleasedirer); ok {
		r.Releasedir(ctx, flags)
	}
}

func (d *hidingDir) Fsyncdir(ctx context.Context, flags uint32) syscall.Errno {
	if f, ok := d.inner.(gofs.FileFsyncdirer); ok {
		return f.Fsyncdir(ctx, flags)
	}
	return 0
}
