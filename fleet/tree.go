package fleet

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"log/slog"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mfm-project/mfm/episodes"
)

// Tree serves the other agents' shipped memory read-only under agents/
// (it satisfies fs.VirtualTree): agents/NAME/ has the layout of a store —
// index.jsonl, grid.jsonl, episodes/<id>/…, previous/life_N/… for earlier
// lives, mine/ when NAME shares its notes, and with Config.Views the views
// beside frames, episodes/<id>/sheet.png and map/ (views.go). Only rows
// whose files were all stored are in the database, so every listed
// episode is complete. Episode files are read from the object store once
// and then from a bounded local cache (shipped episodes never change).
type Tree struct {
	cat   *catalog
	obj   *objects
	cache *fileCache
	grids *gridCopies
	notes *notesCache
	views *views // nil: no views under agents/
}

// newTree returns the tree over cat, keeping its local copies of the
// other agents' grid rows in store/.mfm/fleet/grid/ and their notes in a
// notesCache (which the follower keeps current: Node wires it).
func newTree(store *episodes.Store, cat *catalog, db *pgxpool.Pool, obj *objects, cache *fileCache, log *slog.Logger) (*Tree, error) {
	dir, err := store.MetaPath("fleet", "grid")
	if err != nil {
		return nil, err
	}
	grids, err := newGridCopies(dir, db, log)
	if err != nil {
		return nil, err
	}
	return &Tree{cat: cat, obj: obj, cache: cache, grids: grids, notes: newNotesCache(db, cat.self, log)}, nil
}

// close closes the view renderers and the grid copies' files.
func (t *Tree) close() {
	if t.views != nil {
		t.views.close()
	}
	t.grids.close()
}

var errNotExist = iofs.ErrNotExist

// ReadDir lists dir; directory names end in "/".
func (t *Tree) ReadDir(ctx context.Context, dir string) ([]string, error) {
	if dir == "" {
		var out []string
		for _, a := range t.cat.agentNames() {
			out = append(out, a+"/")
		}
		for _, a := range t.noteAgents(ctx) {
			if t.cat.currentLife(a) == 0 {
				out = append(out, a+"/")
			}
		}
		sort.Strings(out)
		return out, nil
	}
	n, err := t.resolve(ctx, dir)
	if err != nil {
		return nil, err
	}
	if !n.dir {
		return nil, fmt.Errorf("agents/%s: not a directory", dir)
	}
	return n.list(ctx)
}

// Open returns a file's content, or isDir for a directory.
func (t *Tree) Open(ctx context.Context, p string) ([]byte, bool, error) {
	if p == "" {
		return nil, true, nil
	}
	n, err := t.resolve(ctx, p)
	if err != nil {
		return nil, false, err
	}
	if n.dir {
		return nil, true, nil
	}
	b, err := n.read(ctx)
	return b, false, err
}

// Stat sizes p without reading it (fs.VirtualStatter): an episode file
// by its row's file list, so a lookup or ls -l does not fetch it from the
// object store; a shared note by the size its agent's notes were listed
// with; a directory as such. Other files (index.jsonl, grid.jsonl, views)
// answer errors.ErrUnsupported: the mount reads them with Open.
func (t *Tree) Stat(ctx context.Context, p string) (int64, bool, error) {
	if p == "" {
		return 0, true, nil
	}
	n, err := t.resolve(ctx, p)
	switch {
	case err != nil:
		return 0, false, err
	case n.dir:
		return 0, true, nil
	case !n.sized:
		return 0, false, errors.ErrUnsupported
	}
	return n.size, false, nil
}

// OpenFile serves another agent's index.jsonl and grid.jsonl from this
// mount's local copies (fs.VirtualFileOpener): the file open for reading
// and its whole rows' length, taken at once.
func (t *Tree) OpenFile(ctx context.Context, p string) (*os.File, int64, bool, error) {
	n, err := t.resolve(ctx, p)
	if err != nil {
		return nil, 0, false, err
	}
	if n.dir || n.open == nil {
		return nil, 0, false, nil
	}
	f, size, err := n.open(ctx)
	return f, size, err == nil, err
}

// node is a resolved path: a directory with its listing, or a file (with
// its size when it is known without reading it).
type node struct {
	dir  bool
	list func(ctx context.Context) ([]string, error)
	read func(ctx context.Context) ([]byte, error)
	// open, when set, serves the file from a local file (OpenFile).
	open  func(ctx context.Context) (*os.File, int64, error)
	size  int64
	sized bool
}

func dirNode(names ...string) *node {
	return &node{dir: true, list: func(context.Context) ([]string, error) { return names, nil }}
}

func (t *Tree) resolve(ctx context.Context, p string) (*node, error) {
	parts := strings.Split(path.Clean(p), "/")
	agent, rest := parts[0], parts[1:]
	cur := t.cat.currentLife(agent)
	if cur == 0 && !t.hasNotes(ctx, agent) {
		return nil, errNotExist
	}
	if len(rest) == 0 {
		// Listed when read: a lookup of agents/NAME (every path under it
		// passes here) asks the database nothing more.
		return &node{dir: true, list: func(ctx context.Context) ([]string, error) {
			names := []string{}
			if cur > 0 {
				names = append(names, episodes.IndexFileName, episodes.GridFileName, episodes.EpisodesDir+"/")
				if t.views != nil {
					names = append(names, mapDirName+"/")
				}
				if len(t.cat.lives(agent)) > 1 {
					names = append(names, episodes.PreviousDir+"/")
				}
			}
			if t.hasNotes(ctx, agent) {
				names = append(names, "mine/")
			}
			return names, nil
		}}, nil
	}
	switch rest[0] {
	case "mine":
		return t.mineNode(ctx, agent, strings.Join(rest[1:], "/"))
	case episodes.PreviousDir:
		if len(rest) == 1 {
			var names []string
			for _, l := range t.cat.lives(agent) {
				if l != cur {
					names = append(names, episodes.LifeName(l)+"/")
				}
			}
			if len(names) == 0 {
				return nil, errNotExist
			}
			return dirNode(names...), nil
		}
		life, ok := episodes.ParseLifeName(rest[1])
		if !ok || life == cur || t.cat.currentLife(agent) == 0 || t.cat.count(agent, life) == 0 {
			return nil, errNotExist
		}
		return t.lifeNode(ctx, agent, life, rest[2:])
	}
	if cur == 0 {
		return nil, errNotExist
	}
	return t.lifeNode(ctx, agent, cur, rest)
}

// lifeNode resolves rest inside one life of agent.
func (t *Tree) lifeNode(ctx context.Context, agent string, life int, rest []string) (*node, error) {
	if len(rest) == 0 {
		names := []string{episodes.IndexFileName, episodes.GridFileName, episodes.EpisodesDir + "/"}
		if t.views != nil {
			names = append(names, mapDirName+"/")
		}
		return dirNode(names...), nil
	}
	switch rest[0] {
	case mapDirName:
		// map/: every name is a map view (none listed), as in a store's mount.
		switch {
		case t.views == nil:
			return nil, errNotExist
		case len(rest) == 1:
			return dirNode(), nil
		case len(rest) == 2 && viewName(rest[1]):
			return t.viewNode(agent, life, "", mapDirName+"/"+rest[1]), nil
		}
		return nil, errNotExist
	case episodes.IndexFileName:
		if len(rest) > 1 {
			return nil, errNotExist
		}
		size, _ := t.cat.indexSize(agent, life)
		return &node{read: func(context.Context) ([]byte, error) {
			b, _ := t.cat.indexBytes(agent, life)
			return b, nil
		}, open: func(context.Context) (*os.File, int64, error) {
			f, size, ok := t.cat.openIndex(agent, life)
			if !ok {
				return nil, 0, errNotExist
			}
			return f, size, nil
		}, size: size, sized: true}, nil
	case episodes.GridFileName:
		if len(rest) > 1 {
			return nil, errNotExist
		}
		// Sized as held (fetched first if never read); opening it brings
		// the copy up to date.
		return &node{read: func(ctx context.Context) ([]byte, error) { return t.grid(ctx, agent, life) },
			open: func(ctx context.Context) (*os.File, int64, error) { return t.grids.open(ctx, agent, life) },
			size: t.grids.size(ctx, agent, life), sized: true}, nil
	case episodes.EpisodesDir:
	default:
		return nil, errNotExist
	}
	if len(rest) == 1 {
		return &node{dir: true, list: func(context.Context) ([]string, error) {
			ids := t.cat.ids(agent, life)
			for i := range ids {
				ids[i] += "/"
			}
			return ids, nil
		}}, nil
	}
	id := rest[1]
	ep := t.cat.episode(agent, life, id)
	if ep == nil {
		return nil, errNotExist
	}
	rel := strings.Join(rest[2:], "/")
	for _, f := range ep.files {
		if f.Path == rel {
			f := f
			return &node{read: func(ctx context.Context) ([]byte, error) { return t.file(ctx, agent, life, id, f) },
				size: f.Size, sized: true}, nil
		}
	}
	// A directory of the episode: the names one level below rel.
	prefix := rel + "/"
	if rel == "" {
		prefix = ""
	}
	seen := map[string]bool{}
	var names []string
	for _, f := range ep.files {
		if !strings.HasPrefix(f.Path, prefix) {
			continue
		}
		name, sub, isDir := strings.Cut(f.Path[len(prefix):], "/")
		_ = sub
		if isDir {
			name += "/"
		}
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	if len(names) == 0 && rel != "" {
		if viewName(rel) {
			if n := t.viewNode(agent, life, id, episodes.EpisodesDir+"/"+id+"/"+rel); n != nil {
				return n, nil
			}
		}
		return nil, errNotExist
	}
	return dirNode(names...), nil
}

// mapDirName is the directory of map views in an agent's life.
const mapDirName = "map"

// file reads an episode file from the local cache, or from the object
// store into the cache.
func (t *Tree) file(ctx context.Context, agent string, life int, id string, f fileEntry) ([]byte, error) {
	key := episodeKey(agent, life, id, f.Path)
	if b, ok := t.cache.get(key, f.Size); ok {
		return b, nil
	}
	b, err := t.fetch(ctx, agent, life, id, f)
	if err != nil {
		return nil, err
	}
	t.cache.put(key, b)
	return b, nil
}

// fetch reads an episode file from the object store and checks its size
// against the row's file list.
func (t *Tree) fetch(ctx context.Context, agent string, life int, id string, f fileEntry) ([]byte, error) {
	b, err := t.obj.get(ctx, t.obj.key(agent, life, id, f.Path))
	if err != nil {
		return nil, fmt.Errorf("agents/%s: %s/%s: the object store did not answer (try again): %w", agent, id, f.Path, err)
	}
	if int64(len(b)) != f.Size {
		return nil, fmt.Errorf("agents/%s: %s/%s: the object store has %d bytes, the row says %d", agent, id, f.Path, len(b), f.Size)
	}
	return b, nil
}

// grid is agent's life's grid.jsonl: the local copy, brought up to date
// with the rows shipped since (gridCopies).
func (t *Tree) grid(ctx context.Context, agent string, life int) ([]byte, error) {
	return t.grids.read(ctx, agent, life)
}

// noteAgents lists the other agents with shared notes.
func (t *Tree) noteAgents(ctx context.Context) []string {
	names, _ := t.notes.agents(ctx)
	return names
}

func (t *Tree) self() string { return t.cat.self }

func (t *Tree) hasNotes(ctx context.Context, agent string) bool { return t.notes.has(ctx, agent) }

// mineNode serves agents/NAME/mine/rel from the shared notes.
func (t *Tree) mineNode(ctx context.Context, agent, rel string) (*node, error) {
	e, err := t.notes.notesOf(ctx, agent)
	if err != nil {
		return nil, fmt.Errorf("agents/%s/mine: the shared database did not answer: %w", agent, err)
	}
	if n := e.notes[rel]; n != nil {
		return &node{read: func(ctx context.Context) ([]byte, error) { return t.notes.body(ctx, agent, rel) },
			size: n.size, sized: true}, nil
	}
	prefix := ""
	if rel != "" {
		prefix = rel + "/"
	}
	seen := map[string]bool{}
	var names []string
	for _, p := range e.paths {
		if !strings.HasPrefix(p, prefix) {
			continue
		}
		name, _, isDir := strings.Cut(p[len(prefix):], "/")
		if isDir {
			name += "/"
		}
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	if len(names) == 0 && rel != "" {
		return nil, errNotExist
	}
	return dirNode(names...), nil
}

// isNotExist reports a missing path.
func isNotExist(err error) bool { return errors.Is(err, iofs.ErrNotExist) }
