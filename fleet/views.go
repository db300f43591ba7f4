package fleet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/mfm-project/mfm/episodes"
)

// ViewRenderer renders the views of one directory laid out as a store
// (index.jsonl, grid.jsonl, episodes/<id>/…): frame views, episode sheets
// and maps, named as in the local mount relative to that directory.
// view.Viewer satisfies it; fleet does not import the view package.
type ViewRenderer interface {
	View(ctx context.Context, rel string) (data []byte, ok bool, err error)
	Close() error
}

// ViewOpener opens a ViewRenderer over dir.
type ViewOpener func(dir string) (ViewRenderer, error)

// views serves agents/NAME/ views from the file cache: each agent's life
// is a store-shaped directory of the cache (NAME/life_N/), into which the
// files a view needs are fetched before it is rendered by that life's
// renderer.
type views struct {
	open ViewOpener
	mu   sync.Mutex
	by   map[string]ViewRenderer // "agent/life_N" -> renderer
}

func (v *views) renderer(dir, key string) (ViewRenderer, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if r := v.by[key]; r != nil {
		return r, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("views of %s: %w", key, err)
	}
	r, err := v.open(dir)
	if err != nil {
		return nil, fmt.Errorf("views of %s: %w", key, err)
	}
	v.by[key] = r
	return r, nil
}

func (v *views) close() {
	v.mu.Lock()
	defer v.mu.Unlock()
	for k, r := range v.by {
		r.Close()
		delete(v.by, k)
	}
}

// lifeKey is the cache key prefix of an agent's life: its files are kept
// as they lie in the agent's store (episodes/<id>/…, index.jsonl,
// grid.jsonl), so the directory is a store the view package can read.
func lifeKey(agent string, life int) string { return agent + "/" + episodes.LifeName(life) }

// episodeKey is the cache key of an episode file.
func episodeKey(agent string, life int, id, p string) string {
	return lifeKey(agent, life) + "/" + episodes.EpisodesDir + "/" + id + "/" + p
}

// viewNode returns the node of a view of agent's life named rel (relative
// to the life, as in a store: episodes/<id>/observation/image@zoom=4.png,
// episodes/<id>/sheet.png, map/at=0,0.png), or nil when views are off.
// Whether rel names a view at all is known only when it is rendered: a
// name that is not one reads as missing.
func (t *Tree) viewNode(agent string, life int, id, rel string) *node {
	if t.views == nil {
		return nil
	}
	return &node{read: func(ctx context.Context) ([]byte, error) {
		// The files the view reads stay pinned in the cache until it is
		// rendered: fetching one must not evict another it needs.
		var pinned []string
		defer func() { t.cache.unpin(pinned...) }()
		if id != "" {
			// Every file of the episode, so a sheet finds all its frames.
			ep := t.cat.episode(agent, life, id)
			if ep == nil {
				return nil, errNotExist
			}
			for _, f := range ep.files {
				key, err := t.pinFile(ctx, agent, life, id, f)
				if err != nil {
					return nil, err
				}
				pinned = append(pinned, key)
			}
		} else {
			// A map: the life's index and grid as they are now.
			idx, _ := t.cat.indexBytes(agent, life)
			grid, err := t.grid(ctx, agent, life)
			if err != nil {
				return nil, err
			}
			// Both only grow, so a copy of the same size is the same.
			for name, b := range map[string][]byte{episodes.IndexFileName: idx, episodes.GridFileName: grid} {
				if key := lifeKey(agent, life) + "/" + name; t.cache.pin(key, int64(len(b))) || t.cache.putPinned(key, b) {
					pinned = append(pinned, key)
				}
			}
		}
		key := lifeKey(agent, life)
		r, err := t.views.renderer(t.cache.path(key), key)
		if err != nil {
			return nil, err
		}
		b, ok, err := r.View(ctx, rel)
		if !ok {
			return nil, errNotExist
		}
		if err != nil {
			return nil, fmt.Errorf("agents/%s/%s: %w", agent, strings.TrimPrefix(rel, "./"), err)
		}
		return b, nil
	}}
}

// viewName reports whether name may be a view (a view's extension): the
// names a lookup treats as views rather than as missing files.
func viewName(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".png", ".jpg", ".jpeg", ".txt":
		return true
	}
	return false
}

// LocalViewer is the mount's viewer of the agent's own store (fs.Viewer
// has this shape; view.Viewer satisfies it).
type LocalViewer interface {
	View(ctx context.Context, rel string) ([]byte, bool, error)
	Sheet(ctx context.Context, frames, labels []string) ([]byte, error)
	Grammar() string
}

// Viewer wraps the mount's viewer so contact sheets take other agents'
// frames too: a frame under agents/NAME/ (a query's match, agent:NAME or
// agent:all) is fetched into the file cache, inside the store, and drawn
// from there. Everything else goes to local unchanged.
func (n *Node) Viewer(local LocalViewer) *SharedViewer {
	rel, err := filepath.Rel(n.cfg.Store.Root, n.tree.cache.dir)
	if err != nil || !filepath.IsLocal(rel) {
		rel = ""
	}
	return &SharedViewer{LocalViewer: local, tree: n.tree, cacheRel: filepath.ToSlash(rel)}
}

// SharedViewer is a LocalViewer whose sheets can show other agents'
// frames (Node.Viewer).
type SharedViewer struct {
	LocalViewer
	tree     *Tree
	cacheRel string // the file cache, relative to the store root
}

// Stable forwards to the local viewer when it tells stable views apart
// (fs.StableViewer), and is false otherwise.
func (v *SharedViewer) Stable(rel string) bool {
	if s, ok := v.LocalViewer.(interface{ Stable(string) bool }); ok {
		return s.Stable(rel)
	}
	return false
}

// Sheet renders frames as the local viewer does, with frames under
// agents/ read from the file cache (pinned there until the sheet is
// drawn); one that cannot be fetched is drawn as missing.
func (v *SharedViewer) Sheet(ctx context.Context, frames, labels []string) ([]byte, error) {
	out := make([]string, len(frames))
	var pinned []string
	defer func() { v.tree.cache.unpin(pinned...) }()
	for i, f := range frames {
		out[i] = f
		if v.cacheRel == "" || !strings.HasPrefix(f, TreeName+"/") {
			continue
		}
		out[i] = "agents-frame-unavailable/" + f
		if key, ok := v.tree.pinFrame(ctx, strings.TrimPrefix(f, TreeName+"/")); ok {
			pinned = append(pinned, key)
			out[i] = v.cacheRel + "/" + key
		}
	}
	return v.LocalViewer.Sheet(ctx, out, labels)
}

// pinFrame brings the episode file at p (NAME/[previous/life_N/]
// episodes/<id>/<path>) into the cache, pinned, and returns its cache
// key; the caller unpins it.
func (t *Tree) pinFrame(ctx context.Context, p string) (string, bool) {
	parts := strings.Split(p, "/")
	if len(parts) < 4 {
		return "", false
	}
	agent, rest := parts[0], parts[1:]
	life := t.cat.currentLife(agent)
	if rest[0] == episodes.PreviousDir && len(rest) > 2 {
		l, ok := episodes.ParseLifeName(rest[1])
		if !ok {
			return "", false
		}
		life, rest = l, rest[2:]
	}
	if len(rest) < 3 || rest[0] != episodes.EpisodesDir {
		return "", false
	}
	id, rel := rest[1], strings.Join(rest[2:], "/")
	ep := t.cat.episode(agent, life, id)
	if ep == nil {
		return "", false
	}
	for _, f := range ep.files {
		if f.Path == rel {
			key, err := t.pinFile(ctx, agent, life, id, f)
			return key, err == nil
		}
	}
	return "", false
}

// pinFile brings an episode file into the cache, pinned (fileCache.pin),
// and returns its key; the caller unpins it after reading it from disk.
func (t *Tree) pinFile(ctx context.Context, agent string, life int, id string, f fileEntry) (string, error) {
	key := episodeKey(agent, life, id, f.Path)
	if t.cache.pin(key, f.Size) {
		return key, nil
	}
	b, err := t.fetch(ctx, agent, life, id, f)
	if err != nil {
		return "", err
	}
	if !t.cache.putPinned(key, b) {
		return "", fmt.Errorf("agents/%s: %s/%s: %d bytes could not be kept in the file cache %s (its bound is %d bytes)", agent, id, f.Path, len(b), t.cache.dir, t.cache.limit)
	}
	return key, nil
}
