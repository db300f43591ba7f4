package main

import (
	"errors"
	"flag"

	"github.com/mfm-project/mfm/consolidate"
	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/fleet"
	mfmfs "github.com/mfm-project/mfm/fs"
	"github.com/mfm-project/mfm/view"
)

// sharedFlags are the flags that join a mount to the memory shared with
// other agents (docs/SHARED.md); mfmd mount and mfmd play take them.
type sharedFlags struct {
	postgres, objects, endpoint, agent *string
	shareMine                          *bool
	cacheMB                            *int64
}

func addSharedFlags(fl *flag.FlagSet) *sharedFlags {
	return &sharedFlags{
		postgres:  fl.String("shared", "", "share memory with other agents through this PostgreSQL database (postgres://…; with --objects and --agent; see docs/SHARED.md)"),
		objects:   fl.String("objects", "", "S3 location of the shared episode files (s3://BUCKET/PREFIX); credentials from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY"),
		endpoint:  fl.String("objects-endpoint", "", "S3 endpoint URL (default $AWS_ENDPOINT_URL)"),
		agent:     fl.String("agent", "", "this agent's name in the shared memory (a-z 0-9 _ - .)"),
		shareMine: fl.Bool("share-mine", false, "share mine/ too, read-only to the others as agents/NAME/mine/"),
		cacheMB:   fl.Int64("shared-cache-mb", fleet.DefaultCacheBytes>>20, "bound of the local cache of other agents' episode files, in MiB (least recently used files go first)"),
	}
}

// on reports whether sharing was asked for; an error when only some of
// the three needed flags are given.
func (f *sharedFlags) on() (bool, error) {
	if *f.postgres == "" && *f.objects == "" && *f.agent == "" {
		return false, nil
	}
	if *f.postgres == "" || *f.objects == "" || *f.agent == "" {
		return false, errors.New("sharing needs all of --shared, --objects and --agent")
	}
	return true, nil
}

// name is this agent's name when sharing, else "".
func (f *sharedFlags) name() string {
	if on, _ := f.on(); on {
		return *f.agent
	}
	return ""
}

// join starts shipping store and following the others, and adds them to
// hooks: agents/, agent: queries and their explain and sheets; cites then
// checks mine/'s citations of their episodes. Without sharing, agent:
// queries are refused. close stops the node (after the unmount).
func (f *sharedFlags) join(store *episodes.Store, hooks *mfmfs.Hooks, cites *consolidate.Resolver) (close func(), err error) {
	on, err := f.on()
	if err != nil {
		return nil, err
	}
	if !on {
		if hooks.Querier != nil {
			hooks.Querier = fleet.RefuseAgents(hooks.Querier)
		}
		return func() {}, nil
	}
	node, err := fleet.Start(fleet.Config{Store: store, Agent: *f.agent, Postgres: *f.postgres, ShareMine: *f.shareMine, CacheBytes: *f.cacheMB << 20,
		Views: func(dir string) (fleet.ViewRenderer, error) {
			return view.New(&episodes.Store{Root: dir}, view.DefaultLimits())
		},
		Objects: fleet.ObjectsConfig{URL: *f.objects, Endpoint: *f.endpoint}})
	if err != nil {
		return nil, err
	}
	if hooks.Trees == nil {
		hooks.Trees = map[string]mfmfs.VirtualTree{}
	}
	hooks.Trees[fleet.TreeName] = node.Tree()
	if hooks.Querier != nil {
		hooks.Querier = node.Querier(hooks.Querier)
	}
	if hooks.Explain != nil {
		hooks.Explain = node.Explainer(hooks.Explain)
	}
	if hooks.Viewer != nil {
		hooks.Viewer = node.Viewer(hooks.Viewer)
	}
	if cites != nil {
		cites.SetOthers(node.HasEpisode)
	}
	return node.Close, nil
}
