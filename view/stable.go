package view

import (
	"strings"

	"github.com/mfm-project/mfm/episodes"
)

// Stable reports whether the view rel depends only on files that are
// never rewritten, so that a mount may let the kernel cache it (it makes
// a Viewer an fs.StableViewer): a frame view of a recorded episode (not
// then-and-now, which shows now/frame.png), an episode's contact sheet,
// or an earlier life's map. Views of now/ and the current life's maps
// are live, and a name that is not a canonical view is never stable.
func Stable(rel string) bool {
	s, ok, err := Parse(rel)
	if !ok || err != nil {
		return false
	}
	switch s.Kind {
	case FrameView:
		return !s.Frame.ThenNow && recorded(s.Base)
	case SheetView:
		return recorded(s.Base)
	case MapView:
		return s.Life != ""
	}
	return false
}

// Stable is the package's Stable: which of v's views the kernel may cache.
func (v *Viewer) Stable(rel string) bool { return Stable(rel) }

// recorded reports whether the store-relative path p lies in a recorded
// episode of this life or an earlier one.
func recorded(p string) bool {
	return strings.HasPrefix(p, episodes.EpisodesDir+"/") || strings.HasPrefix(p, episodes.PreviousDir+"/")
}
