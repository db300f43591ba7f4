package main

import (
	"strings"

	"github.com/mfm-project/mfm/episodes"
	mfmfs "github.com/mfm-project/mfm/fs"
	"github.com/mfm-project/mfm/view"
)

func init() {
	mountHooks = append(mountHooks, mountHook{name: "view", setup: setupView})
	// mfmd episodes --sheet/--then-now draw with package view, not the
	// tool's plain fallback.
	episodesRenderer = view.NewFiles(view.DefaultLimits())
}

// setupView serves virtual images (views beside frames, sheets, maps).
func setupView(store *episodes.Store, h *mfmfs.Hooks) (func(), error) {
	v, err := view.New(store, view.DefaultLimits())
	if err != nil {
		return nil, err
	}
	h.Viewer = mountViewer{v}
	return func() { v.Close() }, nil
}

// mountViewer is the mount's Viewer: package view's, plus which views the
// kernel may cache (mfmfs.StableViewer).
type mountViewer struct{ *view.Viewer }

// Stable reports whether the view rel depends only on files that are
// never rewritten: a frame view of a recorded episode (not then-and-now,
// which shows now/frame.png), an episode's contact sheet, or an earlier
// life's map. Everything about now/ and the current life's maps is live.
func (v mountViewer) Stable(rel string) bool {
	s, ok, err := view.Parse(rel)
	if !ok || err != nil {
		return false
	}
	recorded := func(p string) bool {
		return strings.HasPrefix(p, episodes.EpisodesDir+"/") || strings.HasPrefix(p, episodes.PreviousDir+"/")
	}
	switch s.Kind {
	case view.FrameView:
		return !s.Frame.ThenNow && recorded(s.Base)
	case view.SheetView:
		return recorded(s.Base)
	case view.MapView:
		return s.Life != ""
	}
	return false
}

var (
	_ mfmfs.Viewer       = mountViewer{}
	_ mfmfs.StableViewer = mountViewer{}
)
