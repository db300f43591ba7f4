package main

import (
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
	h.Viewer = v
	return func() { v.Close() }, nil
}

var _ mfmfs.Viewer = (*view.Viewer)(nil)
