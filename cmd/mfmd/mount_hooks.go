package main

import (
	"context"

	"github.com/mfm-project/mfm/artifact"
	"github.com/mfm-project/mfm/consolidate"
	"github.com/mfm-project/mfm/episodes"
	mfmfs "github.com/mfm-project/mfm/fs"
	"github.com/mfm-project/mfm/harness"
	"github.com/mfm-project/mfm/index"
	"github.com/mfm-project/mfm/view"
)

// setupHooks assembles everything a mount of store serves beyond the
// store's own files. The returned close releases what was opened, last
// first, after unmount; on error, what was already opened is released.
func setupHooks(store *episodes.Store) (mfmfs.Hooks, *consolidate.Resolver, func(), error) {
	var h mfmfs.Hooks
	var closers []func() error
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	// One citation resolver serves cited-by and in:mine, so each life's
	// index is read once (now, in the background), then only what is appended.
	cites := &consolidate.Resolver{Store: store}
	cites.Preload()

	// q/<query>/: by a scan at once, by the cue index once it is open.
	searcher := index.OpenLive(store, index.LiveOptions{})
	closers = append(closers, searcher.Close)
	h.Querier = &index.Querier{Searcher: searcher, Cites: cites.InMine()}
	// q/<query>/explain: the query term by term, by a scan.
	h.Explain = func(ctx context.Context, q string) ([]byte, error) {
		return index.Explain(ctx, store, q, cites.InMine())
	}

	// Virtual images beside frames, sheets, maps; the stable ones kernel-cached.
	viewer, err := view.New(store, view.DefaultLimits())
	if err != nil {
		closeAll()
		return h, nil, nil, err
	}
	closers = append(closers, viewer.Close)
	h.Viewer = viewer

	// /consolidate/: the report, candidate skills and notes, derived on read.
	h.Trees = map[string]mfmfs.VirtualTree{"consolidate": &consolidate.Tree{Store: store, Config: consolidate.DefaultConfig()}}

	// episodes/<id>/cited-by: the mine/ files citing the episode.
	h.CitedBy = func(ctx context.Context, episodeDir string) ([]byte, error) { return cites.CitedBy(episodeDir) }

	// mine/.check: what mfmd check reports, rendered on every read.
	h.Check = func(ctx context.Context) ([]byte, error) {
		r, err := consolidate.Check(store, cites)
		if err != nil {
			return nil, err
		}
		return r.Text(), nil
	}

	// mine/procedures/.catalog, rendered on every read so it follows the store.
	h.ProcedureCatalog = harness.CatalogFunc(store)

	// README.md's "## Provenance": the artifact the store was seeded from, if any.
	h.Provenance = func(ctx context.Context) (string, error) { return provenance(store.Root) }

	return h, cites, closeAll, nil
}

// provenance is the README.md section naming the artifact the store at
// root was seeded from (mfmd init --from-artifact), read from its
// mfm-store.json; "" for a store that was not seeded.
func provenance(root string) (string, error) {
	p, err := artifact.ReadProvenance(root)
	if err != nil || p == nil {
		return "", err
	}
	return p.Markdown(), nil
}

var (
	_ mfmfs.Querier      = (*index.Querier)(nil)
	_ mfmfs.StableViewer = (*view.Viewer)(nil)
	_ mfmfs.Viewer       = (*view.Viewer)(nil)
	_ mfmfs.VirtualTree  = (*consolidate.Tree)(nil)
)
