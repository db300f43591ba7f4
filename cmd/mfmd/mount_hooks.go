package main

import (
	"fmt"

	"github.com/mfm-project/mfm/episodes"
	mfmfs "github.com/mfm-project/mfm/fs"
)

// mountHook wires one library service into a mount's Hooks. Each feature
// registers its hook from its own file (mount_<feature>.go) in init; the
// returned close func runs after unmount.
type mountHook struct {
	name  string
	setup func(store *episodes.Store, h *mfmfs.Hooks) (close func(), err error)
}

var mountHooks []mountHook

// setupHooks runs every registered hook; on error it closes those already set up.
func setupHooks(store *episodes.Store) (mfmfs.Hooks, func(), error) {
	var h mfmfs.Hooks
	var closers []func()
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	for _, mh := range mountHooks {
		c, err := mh.setup(store, &h)
		if err != nil {
			closeAll()
			return h, nil, fmt.Errorf("%s: %w", mh.name, err)
		}
		if c != nil {
			closers = append(closers, c)
		}
	}
	return h, closeAll, nil
}
