package main

import (
	"github.com/mfm-project/mfm/episodes"
	mfmfs "github.com/mfm-project/mfm/fs"
	"github.com/mfm-project/mfm/harness"
)

// The procedure catalog at /mfm/mine/procedures/.catalog: harness.Catalog
// rendered on every read (name, description, parameters, calls, last
// outcome, episodes where written and used), so it follows the store.
func init() {
	mountHooks = append(mountHooks, mountHook{name: "procedure catalog", setup: func(s *episodes.Store, h *mfmfs.Hooks) (func(), error) {
		h.ProcedureCatalog = harness.CatalogFunc(s)
		return nil, nil
	}})
}
