// Package fleet shares memory across agents: each agent's daemon ships its
// completed episodes to a shared PostgreSQL database (rows) and an S3
// object store (files), follows the other agents' shipments, and serves
// them read-only under agents/NAME/ with cue queries taking agent:NAME and
// agent:all (docs/SHARED.md). The local store stays the source of truth
// and the queue: shipping never blocks the agent, and a store that is down
// only delays it.
package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/index/query"
)

// TreeName is the mount's top-level directory of the other agents.
const TreeName = "agents"

// Config configures one agent's node.
type Config struct {
	Store    *episodes.Store
	Agent    string // this agent's name (query.ValidAgentName)
	Postgres string // postgres:// URL of the shared database
	Objects  ObjectsConfig
	// ShareMine ships mine/ files too (agents/NAME/mine/ for the others).
	ShareMine bool
	// CacheBytes bounds the local cache of other agents' episode files
	// (store/.mfm/fleet/cache/; default DefaultCacheBytes): the least
	// recently used files are removed past it.
	CacheBytes int64
	// Poll is how often the local index is checked for new episodes
	// (default 10ms).
	Poll   time.Duration
	Logger *slog.Logger
	// OnShipped, when set, is called after each of this agent's episodes
	// is committed to the shared database (life, episode id), and
	// OnFollowed after another agent's row has reached this node's
	// agents/ tree (agent, life, episode id). They observe the path from
	// episode to other mounts (benchmarks, tests); they must not block.
	OnShipped func(life int, id string)
	// Views, when set, serves views under agents/NAME/ as in a store's
	// mount (frame views beside frames, episodes/<id>/sheet.png, map/…),
	// each rendered by a renderer Views opens over the agent's life in
	// the local file cache (the files a view needs are fetched first).
	Views      ViewOpener
	OnFollowed func(agent string, life int, id string)
}

// Node is a running agent: shipper and follower, and the tree and
// querier the mount serves.
type Node struct {
	cfg     Config
	db      *pgxpool.Pool
	obj     *objects
	cat     *catalog
	ship    *shipper
	follow  *follower
	tree    *Tree
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	schemaM sync.Mutex
	schema  bool
}

// Start starts shipping and following. It does not wait for either store:
// with PostgreSQL or the object store down the agent works locally and
// shipping starts when they answer.
func Start(cfg Config) (*Node, error) {
	if !query.ValidAgentName(cfg.Agent) {
		return nil, fmt.Errorf("agent name %q: want 1 to 64 of a-z 0-9 _ - ., starting with a letter or digit, not \"all\"", cfg.Agent)
	}
	if cfg.Store == nil {
		return nil, errors.New("fleet: no store")
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 10 * time.Millisecond
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	obj, err := openObjects(cfg.Objects)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	db, err := newPool(ctx, cfg.Postgres)
	if err != nil {
		cancel()
		return nil, err
	}
	cacheDir, err := cfg.Store.MetaPath("fleet", "cache")
	if err != nil {
		cancel()
		db.Close()
		return nil, err
	}
	cache, err := openFileCache(cacheDir, cfg.CacheBytes)
	if err != nil {
		cancel()
		db.Close()
		return nil, err
	}
	indexDir, err := cfg.Store.MetaPath("fleet", "index")
	if err != nil {
		cancel()
		db.Close()
		return nil, err
	}
	cat, err := newCatalog(cfg.Agent, indexDir)
	if err != nil {
		cancel()
		db.Close()
		return nil, err
	}
	n := &Node{cfg: cfg, db: db, obj: obj, cat: cat, cancel: cancel}
	n.ship, err = newShipper(cfg.Store, cfg.Agent, db, obj, cfg.Poll, cfg.ShareMine, cfg.Logger)
	if err != nil {
		cancel()
		db.Close()
		return nil, err
	}
	n.ship.before = n.ensureSchema
	n.ship.onShipped = cfg.OnShipped
	n.follow = newFollower(db, cfg.Postgres, cfg.Agent, n.cat, cfg.Logger)
	n.follow.before = n.ensureSchema
	n.follow.onRow = cfg.OnFollowed
	n.tree, err = newTree(cfg.Store, n.cat, db, obj, cache, cfg.Logger)
	if err != nil {
		cancel()
		db.Close()
		return nil, err
	}
	n.follow.notesListening = n.tree.notes.setListening
	n.follow.onNotes = n.tree.notes.invalidate
	if cfg.Views != nil {
		n.tree.views = &views{open: cfg.Views, by: map[string]ViewRenderer{}}
	}
	n.wg.Add(2)
	go func() { defer n.wg.Done(); n.ship.run(ctx) }()
	go func() { defer n.wg.Done(); n.follow.run(ctx) }()
	return n, nil
}

// newPool opens a connection pool on url; it connects lazily, so a
// database that is down is not an error here.
func newPool(ctx context.Context, url string) (*pgxpool.Pool, error) {
	pcfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("shared database %q: want a postgres:// URL: %w", url, err)
	}
	pcfg.MaxConns = 8
	// Plans for the values at hand: pgx prepares each statement, and after
	// five runs PostgreSQL may switch to a generic plan that cannot see
	// the values, which for a near: box picks the (x, z) index and sorts
	// 9,000 rows at 1M rows (42–60 ms) where the walk back over time takes
	// 2.6 ms.
	if pcfg.ConnConfig.RuntimeParams == nil {
		pcfg.ConnConfig.RuntimeParams = map[string]string{}
	}
	pcfg.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_custom_plan"
	pcfg.ConnConfig.ConnectTimeout = 3 * time.Second
	db, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("shared database: %w", err)
	}
	return db, nil
}

// ensureSchema creates the shared tables once per process.
func (n *Node) ensureSchema(ctx context.Context) error {
	n.schemaM.Lock()
	defer n.schemaM.Unlock()
	if n.schema {
		return nil
	}
	if err := ensureSchema(ctx, n.db); err != nil {
		return err
	}
	n.schema = true
	return nil
}

// HasEpisode reports whether this mount holds another agent's episode
// (life 0: the agent's current life); known is false for an agent it
// holds no episode of (consolidate.OtherEpisodes, for mine/'s citations).
func (n *Node) HasEpisode(agent string, life int, id string) (exists, known bool) {
	cur := n.cat.currentLife(agent)
	if cur == 0 {
		return false, false
	}
	if life == 0 {
		life = cur
	}
	return n.cat.has(agent, life, id), true
}

// Tree is the agents/ tree for fs.Hooks.Trees[TreeName].
func (n *Node) Tree() *Tree { return n.tree }

// Querier wraps the mount's local querier with agent:NAME and agent:all.
func (n *Node) Querier(local LocalQuerier) *Querier {
	return &Querier{local: local, self: n.cfg.Agent, db: n.db, cat: n.cat}
}

// Ready is closed once the follower has loaded the shared rows.
func (n *Node) Ready() <-chan struct{} { return n.follow.ready }

// ShipStatus is the last shipping error (nil while shipping works) and
// how many episodes this process inserted.
func (n *Node) ShipStatus() (shipped int64, err error) {
	return n.ship.status()
}

// Close stops shipping and following (an episode being shipped is
// finished or retried at the next start) and closes the connections.
func (n *Node) Close() {
	n.cancel()
	n.wg.Wait()
	n.tree.close()
	n.cat.close()
	n.db.Close()
}
