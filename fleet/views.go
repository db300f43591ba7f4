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
		if id != "" {
			// Every file of the episode, so a sheet finds all its frames.
			ep := t.cat.episode(agent, life, id)
			if ep == nil {
				return nil, errNotExist
			}
			for _, f := range ep.files {
				if t.cache.has(episodeKey(agent, life, id, f.Path), f.Size) {
					continue
				}
				if _, err := t.file(ctx, agent, life, id, f); err != nil {
					return nil, err
				}
			}
		} else {
			// A map: the life's index and grid as they are now.
			idx, _ := t.cat.indexBytes(agent, life)
			grid, err := t.grid(ctx, agent, life)
			if err != nil {
				return nil, err
			}
			t.cache.put(lifeKey(agent, life)+"/"+episodes.IndexFileName, idx)
			t.cache.put(lifeKey(agent, life)+"/"+episodes.GridFileName, grid)
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
