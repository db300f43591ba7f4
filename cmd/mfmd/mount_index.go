package main

import (
	"github.com/mfm-project/mfm/episodes"
	mfmfs "github.com/mfm-project/mfm/fs"
	"github.com/mfm-project/mfm/index"
)

func init() {
	mountHooks = append(mountHooks, mountHook{name: "index", setup: setupIndex})
}

// setupIndex answers /q/<query>/ with the cue index.
func setupIndex(s *episodes.Store, h *mfmfs.Hooks) (func(), error) {
	searcher, release := openMountSearcher(s)
	h.Querier = &index.Querier{Searcher: searcher, Cites: mineCites(s)}
	return release, nil
}

var _ mfmfs.Querier = (*index.Querier)(nil)
