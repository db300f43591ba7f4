package fleet

import (
	"bytes"
	"context"
	"image/color"
	"image/png"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/fleet/fleettest"
	"github.com/mfm-project/mfm/view"
)

// TestFileCachePins: a pinned file is not evicted however far the bound
// is passed, and goes (least recently used first) once unpinned; a put
// pins only when the file is kept.
func TestFileCachePins(t *testing.T) {
	c, err := openFileCache(filepath.Join(t.TempDir(), "cache"), 150)
	if err != nil {
		t.Fatal(err)
	}
	if !c.putPinned("k1", make([]byte, 100)) || !c.putPinned("k2", make([]byte, 100)) {
		t.Fatal("putPinned of a file within the bound did not keep it")
	}
	c.put("k3", make([]byte, 100))
	for _, k := range []string{"k1", "k2"} {
		if !held(c, k, 100) {
			t.Fatalf("pinned %s evicted", k)
		}
	}
	if held(c, "k3", 100) {
		t.Fatal("k3 kept although only pinned files and it pass the bound")
	}
	if !c.pin("k1", 100) || c.pin("k1", 99) || c.pin("nosuch", 1) {
		t.Fatal("pin of held/other size/missing keys")
	}
	c.unpin("k1", "k2") // k1 is still pinned once
	if !held(c, "k1", 100) || held(c, "k2", 100) {
		t.Fatalf("after unpin: k1 held %v (pinned twice), k2 held %v (unpinned, over the bound)", held(c, "k1", 100), held(c, "k2", 100))
	}
	c.unpin("k1")
	if got := c.bytes(); got != 100 {
		t.Fatalf("%d bytes held after every pin is released, want 100", got)
	}
	if c.putPinned("big", make([]byte, 151)) {
		t.Fatal("putPinned kept a file larger than the bound")
	}
}

// TestSheetUnderTinyCache: with a file cache that holds one frame, a
// query's contact sheet of four other-agent frames draws all four, and an
// episode's sheet.png both of its frames: each file stays until the draw
// that fetched it is done. Afterwards the cache is back within its bound.
func TestSheetUnderTinyCache(t *testing.T) {
	tm := newTeam(t)
	alice := tm.agent("alice", false)
	colors := []color.NRGBA{{200, 10, 10, 255}, {10, 200, 10, 255}, {10, 10, 200, 255}, {200, 200, 10, 255}}
	var frames [][]byte
	largest := 0
	for _, c := range colors {
		frames = append(frames, testPNG(t, 40, 30, c))
		largest = max(largest, len(frames[len(frames)-1]))
	}
	var ids []string
	for i := range colors {
		id := alice.w.NextID()
		row, err := fleettest.LifeRow(id, 1, i)
		if err != nil {
			t.Fatal(err)
		}
		err = alice.w.WriteEpisode(id, episodes.Episode{
			Files: map[string][]byte{
				"observation/image.png": frames[i],
				"frames/000001.png":     frames[(i+1)%len(frames)],
				"action.json":           []byte(`{}`),
			},
			Row: row,
		})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	s, err := episodes.Init(filepath.Join(t.TempDir(), "bob"))
	if err != nil {
		t.Fatal(err)
	}
	bound := int64(largest + 10) // one frame, not two
	bob, err := Start(Config{Store: s, Agent: "bob", Postgres: tm.pg, CacheBytes: bound,
		Objects: ObjectsConfig{URL: tm.s3.URL("team"), Endpoint: tm.s3.Endpoint, Access: tm.s3.Access, Secret: tm.s3.Secret},
		Logger:  slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil)),
		Views: func(dir string) (ViewRenderer, error) {
			return view.New(&episodes.Store{Root: dir}, view.DefaultLimits())
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bob.Close)
	waitFor(t, 20*time.Second, "alice's episodes followed", func() bool { return bob.cat.count("alice", 1) == len(ids) })

	ctx := context.Background()
	local, err := view.New(s, view.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	var paths, labels []string
	for _, id := range ids {
		paths = append(paths, "agents/alice/episodes/"+id+"/observation/image.png")
		labels = append(labels, id)
	}
	b, err := bob.Viewer(local).Sheet(ctx, paths, labels)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range colors {
		if !hasColor(img, uint32(c.R), uint32(c.G), uint32(c.B)) {
			t.Errorf("query sheet: frame %d (%s, colour %v) drawn as missing", i, ids[i], c)
		}
	}
	if got := bob.tree.cache.bytes(); got > bound {
		t.Errorf("after the query sheet the cache holds %d bytes, bound %d", got, bound)
	}

	b, _, err = bob.Tree().Open(ctx, "alice/episodes/"+ids[0]+"/sheet.png")
	if err != nil {
		t.Fatal(err)
	}
	if img, err = png.Decode(bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
	for _, c := range colors[:2] {
		if !hasColor(img, uint32(c.R), uint32(c.G), uint32(c.B)) {
			t.Errorf("episode sheet.png: frame of colour %v drawn as missing", c)
		}
	}
	if got := bob.tree.cache.bytes(); got > bound {
		t.Errorf("after the episode sheet the cache holds %d bytes, bound %d", got, bound)
	}
}
