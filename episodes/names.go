package episodes

import (
	"path"
	"strings"
)

// MatchName is the short name of the episode directory dir (relative to
// the store root), as a query match is named in the mount's q/<query>/
// and by the MCP server: the episode id for the current life
// ("episodes/ep_000123" -> "ep_000123"), prefixed by the life for an
// earlier one ("previous/life_1/episodes/ep_000004" ->
// "life_1.ep_000004"); "" for a directory outside the store.
func MatchName(dir string) string {
	dir = path.Clean(strings.Trim(dir, "/"))
	if dir == "." || strings.HasPrefix(dir, "..") {
		return ""
	}
	var parts []string
	for _, p := range strings.Split(dir, "/") {
		if p != EpisodesDir && p != PreviousDir {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ".")
}

// FrameOf is the store-relative frame of the index row whose episode
// directory is dir: the row's image, re-rooted like dir (the rows of an
// earlier life are relative to that life), else dir/observation/image.png.
func FrameOf(row []byte, dir string) string {
	r, err := ParseRow(row)
	if err == nil && r.Image != "" {
		img := path.Clean(r.Image)
		if p := path.Clean(r.Path); r.Path != "" && strings.HasPrefix(img, p+"/") {
			return path.Join(dir, strings.TrimPrefix(img, p+"/"))
		}
		if prefix, ok := strings.CutSuffix(path.Clean(dir), path.Clean(r.Path)); ok && r.Path != "" {
			return path.Join(prefix, img)
		}
	}
	return path.Join(dir, ObservationFileName)
}
