package view

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/internal/filestamp"
	"github.com/mfm-project/mfm/internal/lru"
)

// Viewer renders the views of one store. It satisfies the mount's
// fs.Viewer (View, Sheet, Grammar) and fs.StableViewer (Stable). Every
// file it reads is opened through an os.Root on the store directory, so
// no name (and no symlink inside the store) reaches outside it. It is
// safe for concurrent use.
type Viewer struct {
	store *episodes.Store
	root  *os.Root
	lim   Limits
	fr    *frames
	out   *lru.Cache[[]byte]
	pool  *pool
	maps  mapData
}

// New returns a Viewer of store with limits lim; Close releases it.
func New(store *episodes.Store, lim Limits) (*Viewer, error) {
	root, err := os.OpenRoot(store.Root)
	if err != nil {
		return nil, fmt.Errorf("view: open store %s: %w", store.Root, err)
	}
	v := &Viewer{store: store, root: root, lim: lim,
		out:  lru.New(lim.RenderCacheBytes, func(b []byte) int64 { return int64(len(b)) + 64 }),
		pool: newPool(lim.Workers, lim.RenderTimeout),
		maps: mapData{grids: map[string]*tail[gridCell]{}, index: map[string]*tail[posRow]{}}}
	v.fr = newFrames(&v.lim, v.open)
	return v, nil
}

// Close releases the store directory.
func (v *Viewer) Close() error { return v.root.Close() }

// open opens a store-relative slash path inside the store. now/frame.png
// is the latest frame: the file when the harness wrote one, else the last
// episode's (episodes.LatestFramePath), as the mount serves it.
func (v *Viewer) open(name string) (*os.File, error) {
	if !fs.ValidPath(name) {
		return nil, fmt.Errorf("%q is not a path inside the store", name)
	}
	f, err := v.root.Open(name)
	if name == nowFrame && errors.Is(err, fs.ErrNotExist) {
		if latest, lerr := episodes.LatestFramePath(v.store); lerr == nil {
			if rel, rerr := filepath.Rel(v.store.Root, latest); rerr == nil && filepath.IsLocal(rel) {
				return v.root.Open(filepath.ToSlash(rel))
			}
		}
	}
	return f, err
}

// CacheStats reports the rendered-output and decoded-frame caches: entries,
// bytes, hits, misses.
func (v *Viewer) CacheStats() (out, frames [4]int64) {
	n, u, h, m := v.out.Stats()
	out = [4]int64{int64(n), u, h, m}
	n, u, h, m = v.fr.cache.Stats()
	frames = [4]int64{int64(n), u, h, m}
	return
}

// View renders the view named rel (a slash path relative to the mount
// root). ok is false when rel is not a view name, or names a frame or an
// episode that does not exist; err is a malformed view or a failed render,
// written for the agent to read.
func (v *Viewer) View(ctx context.Context, rel string) ([]byte, bool, error) {
	s, ok, err := Parse(rel)
	if !ok {
		return nil, false, nil
	}
	if err != nil {
		return nil, true, err
	}
	return v.Render(ctx, s)
}

// Render renders a parsed view; ok is as for View.
func (v *Viewer) Render(ctx context.Context, s Spec) ([]byte, bool, error) {
	rel := s.Canonical()
	var key string
	switch s.Kind {
	case FrameView:
		st, err := v.fr.stat(s.Base)
		if errors.Is(err, ErrNoFrame) {
			return nil, false, nil
		}
		if err != nil {
			return nil, true, fmt.Errorf("view %q: %w", rel, err)
		}
		key = rel + "\x00" + st.String()
		if s.Frame.ThenNow {
			nst, _ := v.fr.stat(nowFrame)
			key += "\x00" + nst.String()
		}
	case SheetView:
		st, err := v.dirStamp(s.Base)
		if err != nil {
			return nil, false, nil
		}
		key = rel + "\x00" + st
	case MapView:
		key = rel + "\x00" + v.mapStamp(s)
	}
	if b, hit := v.out.Get(key); hit {
		return b, true, nil
	}
	b, err := v.pool.run(ctx, "view "+strconv.Quote(rel), func() ([]byte, error) {
		switch s.Kind {
		case FrameView:
			return v.renderFrame(s)
		case SheetView:
			return v.renderEpisodeSheet(s)
		default:
			return v.renderMap(s)
		}
	})
	if err != nil {
		if errors.Is(err, ErrNoFrame) && s.Kind != MapView {
			return nil, true, fmt.Errorf("view %q: %w", rel, err)
		}
		return nil, true, wrapView(rel, err)
	}
	v.out.Put(key, b)
	return b, true, nil
}

func wrapView(rel string, err error) error {
	if strings.HasPrefix(err.Error(), "view ") {
		return err
	}
	return fmt.Errorf("view %q: %w", rel, err)
}

const nowFrame = episodes.NowDir + "/frame.png"

// dirStamp identifies an episode directory's contents for cache keys
// (episodes are written whole and never changed; frames/ is checked too).
func (v *Viewer) dirStamp(dir string) (string, error) {
	st, err := v.root.Stat(dir)
	if err != nil || !st.IsDir() {
		return "", fmt.Errorf("no episode %s", dir)
	}
	s := filestamp.Of(st).String()
	if fst, err := v.root.Stat(dir + "/frames"); err == nil {
		s += ";" + filestamp.Of(fst).String()
	}
	return s, nil
}

func (v *Viewer) encode(img image.Image, f Format) ([]byte, error) { return Encode(img, f) }

func (v *Viewer) renderFrame(s Spec) ([]byte, error) {
	src, _, err := v.fr.load(s.Base)
	if err != nil {
		return nil, err
	}
	img, _, err := applyFrame(src, s.Frame, &v.lim)
	if err != nil {
		return nil, err
	}
	if s.Frame.ThenNow {
		var now *image.NRGBA
		if nsrc, _, err := v.fr.load(nowFrame); err == nil {
			now, _, err = applyFrame(nsrc, s.Frame, &v.lim)
			if err != nil {
				return nil, fmt.Errorf("the same view of %s: %w", nowFrame, err)
			}
		} else if !errors.Is(err, ErrNoFrame) {
			return nil, err
		}
		q := strings.ReplaceAll(cutQuestion(s.Frame.Question, v.lim.MaxQuestion), "_", " ")
		img, err = RenderThenNow(img, now, "THEN "+v.frameLabel(s.Base), "NOW "+v.nowLabel(), q, &v.lim)
		if err != nil {
			return nil, err
		}
	}
	return v.encode(img, s.Format)
}

// readSmall reads a small store file (at most 4 MiB).
func (v *Viewer) readSmall(name string) ([]byte, error) {
	f, err := v.open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 4<<20))
}

type stateInfo struct {
	Step *int64 `json:"step"`
	Pos  *struct {
		X, Y, Z float64
	} `json:"pos"`
}

func (v *Viewer) readState(name string) (stateInfo, bool) {
	var st stateInfo
	b, err := v.readSmall(name)
	if err != nil || json.Unmarshal(b, &st) != nil {
		return st, false
	}
	return st, true
}

func (st stateInfo) describe() string {
	var b strings.Builder
	if st.Step != nil {
		fmt.Fprintf(&b, "step %d", *st.Step)
	}
	if st.Pos != nil {
		fmt.Fprintf(&b, " at (%.0f,%.0f,%.0f)", st.Pos.X, st.Pos.Y, st.Pos.Z)
	}
	return strings.TrimSpace(b.String())
}

// frameLabel names a frame by episode and step: "ep_000012 step 1192 at (3170,69,1402)".
func (v *Viewer) frameLabel(base string) string {
	dir, file := path.Split(base)
	dir = strings.TrimSuffix(dir, "/")
	if base == nowFrame {
		return "now/frame.png"
	}
	ep := ""
	for d := dir; d != "." && d != "" && d != "/"; d = path.Dir(d) {
		if strings.HasPrefix(path.Base(d), "ep_") {
			ep = d
			break
		}
	}
	id := path.Base(ep)
	if ep == "" {
		return base
	}
	if strings.HasPrefix(ep, episodes.PreviousDir+"/") {
		id = strings.SplitN(ep, "/", 3)[1] + " " + id
	}
	if path.Base(dir) == "frames" {
		if n, err := strconv.ParseInt(strings.TrimSuffix(file, ".png"), 10, 64); err == nil {
			return fmt.Sprintf("%s step %d", id, n)
		}
	}
	if st, ok := v.readState(ep + "/state/state.json"); ok {
		return strings.TrimSpace(id + " " + st.describe())
	}
	return id
}

func (v *Viewer) nowLabel() string {
	if st, ok := v.readState(episodes.NowDir + "/state.json"); ok {
		return st.describe()
	}
	return ""
}

// episodeFrames lists an episode's frames in step order: the observation
// (at the start state's step) and frames/NNNNNN.png.
func (v *Viewer) episodeFrames(dir string) (names []string, steps []int64) {
	first := int64(-1)
	if st, ok := v.readState(dir + "/state/state.json"); ok && st.Step != nil {
		first = *st.Step
	}
	if _, err := v.root.Stat(dir + "/observation/image.png"); err == nil {
		names, steps = append(names, dir+"/observation/image.png"), append(steps, first)
	}
	f, err := v.open(dir + "/frames")
	if err != nil {
		return
	}
	defer f.Close()
	ents, _ := f.ReadDir(-1)
	type fr struct {
		name string
		step int64
	}
	var list []fr
	for _, e := range ents {
		n, ok := strings.CutSuffix(e.Name(), ".png")
		if !ok || !e.Type().IsRegular() {
			continue
		}
		step, err := strconv.ParseInt(n, 10, 64)
		if err != nil || step == first {
			continue
		}
		list = append(list, fr{dir + "/frames/" + e.Name(), step})
	}
	sort.Slice(list, func(i, j int) bool { return list[i].step < list[j].step })
	for _, x := range list {
		names, steps = append(names, x.name), append(steps, x.step)
	}
	return
}

func (v *Viewer) renderEpisodeSheet(s Spec) ([]byte, error) {
	names, steps := v.episodeFrames(s.Base)
	id := path.Base(s.Base)
	title := id
	if s.Life != "" {
		title = strings.TrimSuffix(strings.TrimPrefix(s.Life, episodes.PreviousDir+"/"), "/") + " " + id
	}
	if s.Sheet.Steps {
		var n2 []string
		var s2 []int64
		for i := range names {
			if steps[i] >= s.Sheet.From && steps[i] <= s.Sheet.To {
				n2, s2 = append(n2, names[i]), append(s2, steps[i])
			}
		}
		names, steps = n2, s2
		title += fmt.Sprintf("  steps %d..%d", s.Sheet.From, s.Sheet.To)
	}
	if len(names) == 0 {
		if s.Sheet.Steps {
			return nil, fmt.Errorf("%s has no frames in steps %d..%d", s.Base, s.Sheet.From, s.Sheet.To)
		}
		return nil, fmt.Errorf("%s has no frames (neither observation/image.png nor frames/)", s.Base)
	}
	title += fmt.Sprintf("  %d frame(s)", len(names))
	if n := len(names); n > v.lim.MaxTiles {
		k := v.lim.MaxTiles
		n2, s2 := make([]string, k), make([]int64, k)
		for i := range k {
			j := i * (n - 1) / (k - 1)
			n2[i], s2[i] = names[j], steps[j]
		}
		names, steps = n2, s2
		title += fmt.Sprintf(", %d shown evenly spaced (use @steps=A..B for all)", k)
	}
	tiles := make([]Tile, len(names))
	for i, n := range names {
		label := id
		if steps[i] >= 0 {
			label += " @" + strconv.FormatInt(steps[i], 10)
		}
		tiles[i] = tileFor(v.fr, n, label)
	}
	img, err := RenderSheet(tiles, SheetLayout{Cols: s.Sheet.Cols, TileW: s.Sheet.TileW, Title: title}, &v.lim)
	if err != nil {
		return nil, err
	}
	return v.encode(img, s.Format)
}

// Sheet renders a PNG contact sheet of frames (store-relative paths), tile
// i labelled labels[i]; a missing or unreadable frame is a grey tile
// saying so. More frames than the tile cap is an error.
func (v *Viewer) Sheet(ctx context.Context, frames, labels []string) ([]byte, error) {
	if len(frames) > v.lim.MaxTiles {
		return nil, fmt.Errorf("contact sheet: %d frames, at most %d tiles: narrow the query (last:%d)", len(frames), v.lim.MaxTiles, v.lim.MaxTiles)
	}
	h := sha256.New()
	for i, f := range frames {
		st, _ := v.fr.stat(f)
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00", f, at(labels, i), st)
	}
	key := "sheet\x00" + hex.EncodeToString(h.Sum(nil))
	if b, ok := v.out.Get(key); ok {
		return b, nil
	}
	b, err := v.pool.run(ctx, "contact sheet", func() ([]byte, error) {
		tiles := make([]Tile, len(frames))
		for i, name := range frames {
			tiles[i] = tileFor(v.fr, name, at(labels, i))
		}
		img, err := RenderSheet(tiles, SheetLayout{}, &v.lim)
		if err != nil {
			return nil, err
		}
		return Encode(img, PNG)
	})
	if err != nil {
		return nil, err
	}
	v.out.Put(key, b)
	return b, nil
}

// ThenNow renders the stored frame (store-relative) beside now/frame.png,
// labelled, with question written beneath when not empty, in format f.
func (v *Viewer) ThenNow(ctx context.Context, frame, question string, f Format) ([]byte, error) {
	return v.pool.run(ctx, "then-and-now", func() ([]byte, error) {
		then, _, err := v.fr.load(frame)
		if err != nil {
			return nil, err
		}
		now, _, err := v.fr.load(nowFrame)
		if err != nil && !errors.Is(err, ErrNoFrame) {
			return nil, err
		}
		img, err := RenderThenNow(then, now, "THEN "+v.frameLabel(frame), "NOW "+v.nowLabel(), cutQuestion(question, v.lim.MaxQuestion), &v.lim)
		if err != nil {
			return nil, err
		}
		return Encode(img, f)
	})
}
