package main

import (
	"context"

	"github.com/mfm-project/mfm/artifact"
	"github.com/mfm-project/mfm/episodes"
	mfmfs "github.com/mfm-project/mfm/fs"
)

func init() {
	mountHooks = append(mountHooks, mountHook{name: "provenance", setup: setupProvenance})
}

// setupProvenance shows in the mount's README.md which artifact the store
// was seeded from (mfmd init --from-artifact): artifact.ReadProvenance of
// mfm-store.json on every render, as a "## Provenance" section; nothing
// for a store that was not seeded.
func setupProvenance(store *episodes.Store, h *mfmfs.Hooks) (func(), error) {
	root := store.Root
	h.Provenance = func(ctx context.Context) (string, error) {
		p, err := artifact.ReadProvenance(root)
		if err != nil || p == nil {
			return "", err
		}
		return p.Markdown(), nil
	}
	return nil, nil
}
