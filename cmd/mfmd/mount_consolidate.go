package main

import (
	"context"

	"github.com/mfm-project/mfm/consolidate"
	"github.com/mfm-project/mfm/episodes"
	mfmfs "github.com/mfm-project/mfm/fs"
)

func init() {
	mountHooks = append(mountHooks, mountHook{name: "consolidate", setup: func(s *episodes.Store, h *mfmfs.Hooks) (func(), error) {
		if h.Trees == nil {
			h.Trees = map[string]mfmfs.VirtualTree{}
		}
		h.Trees["consolidate"] = &consolidate.Tree{Store: s, Config: consolidate.DefaultConfig()}
		h.CitedBy = func(ctx context.Context, episodeDir string) ([]byte, error) {
			return consolidate.CitedBy(s, episodeDir)
		}
		return nil, nil
	}})
}
