package main

import (
	"context"
	"log/slog"
	"sync"

	"github.com/mfm-project/mfm/consolidate"
	"github.com/mfm-project/mfm/episodes"
	mfmfs "github.com/mfm-project/mfm/fs"
)

// resolvers holds one citation Resolver per store root, shared by the
// mount's cited-by files and the in:mine queries, so that each life's
// index is read once and then only what is appended to it.
var resolvers sync.Map // store root -> *consolidate.Resolver

func citationResolver(s *episodes.Store) *consolidate.Resolver {
	r, _ := resolvers.LoadOrStore(s.Root, &consolidate.Resolver{Store: s})
	return r.(*consolidate.Resolver)
}

func init() {
	mountHooks = append(mountHooks, mountHook{name: "consolidate", setup: func(s *episodes.Store, h *mfmfs.Hooks) (func(), error) {
		if h.Trees == nil {
			h.Trees = map[string]mfmfs.VirtualTree{}
		}
		h.Trees["consolidate"] = &consolidate.Tree{Store: s, Config: consolidate.DefaultConfig()}
		cites := citationResolver(s)
		// Read the indexes now, in the background: the first cited-by or
		// in:mine query would otherwise wait for it (7 s on a 1M-row
		// index); later calls read only what was appended.
		go func() {
			if _, err := cites.Citations(); err != nil {
				slog.Warn("citations: reading the indexes", slog.Any("err", err))
			}
		}()
		h.CitedBy = func(ctx context.Context, episodeDir string) ([]byte, error) {
			return cites.CitedBy(episodeDir)
		}
		return nil, nil
	}})
}
