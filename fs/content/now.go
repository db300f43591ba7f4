package content

import (
	"os"

	"github.com/mfm-project/mfm/episodes"
)

// nowFiles are the entries of /now/: the harness's now/<name>, or, when
// it has not written one, the matching file of the last episode.
var nowFiles = []struct{ name, fallback string }{
	{"state.json", "state/state.json"},
	{"frame.png", "observation/image.png"},
}

// NowNames are the names /now/ may hold, in listing order.
func NowNames() []string {
	out := make([]string, len(nowFiles))
	for i, f := range nowFiles {
		out[i] = f.name
	}
	return out
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
