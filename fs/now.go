package fs

import (
	"context"
	"errors"
	"os"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mfm-project/mfm/episodes"
)

// nowFiles are the entries of /now/: the harness's now/<name>, or, when
// it has not written one, the matching file of the last episode.
var nowFiles = []struct{ name, fallback string }{
	{"state.json", "state/state.json"},
	{"frame.png", "observation/image.png"},
}

// NowPath returns the store file /now/<name> shows: now/<name> if the
// harness wrote it, else the last episode's state or frame.
func NowPath(s *episodes.Store, name string) (string, error) {
	for _, f := range nowFiles {
		if f.name != name {
			continue
		}
		p := s.Path(episodes.NowDir, name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		rows, err := TailRows(s.Path(episodes.IndexFileName), 0, 1)
		if err != nil {
			return "", err
		}
		if len(rows) == 0 {
			return "", os.ErrNotExist
		}
		dir := rows[0].Path
		if dir == "" {
			dir = episodes.EpisodesDir + "/" + rows[0].ID
		}
		p = s.Path(dir, f.fallback)
		if f.name == "frame.png" && rows[0].Image != "" {
			p = s.Path(rows[0].Image)
		}
		if _, err := os.Stat(p); err != nil {
			return "", err
		}
		return p, nil
	}
	return "", os.ErrNotExist
}

func newNowDir(m *mfs) (gofs.InodeEmbedder, error) {
	d := &vdir{m: m}
	d.lookup = func(ctx context.Context, name string) (gofs.InodeEmbedder, uint32, syscall.Errno) {
		if _, err := NowPath(m.store, name); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, 0, syscall.ENOENT
			}
			return nil, 0, m.fail(ctx, "/now/"+name, err)
		}
		return &proxyFile{m: m, kind: "now", resolve: func() (string, error) { return NowPath(m.store, name) }}, fuse.S_IFREG, 0
	}
	d.list = func(ctx context.Context) ([]fuse.DirEntry, syscall.Errno) {
		var out []fuse.DirEntry
		for _, f := range nowFiles {
			if _, err := NowPath(m.store, f.name); err == nil {
				out = append(out, fuse.DirEntry{Name: f.name, Mode: fuse.S_IFREG, Ino: virtualIno(d.StableAttr().Ino, f.name)})
			}
		}
		return out, 0
	}
	return d, nil
}
