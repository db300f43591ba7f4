package fleet

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	iofs "io/fs"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/fleet/fleettest"
	"github.com/mfm-project/mfm/view"
)

func testPNG(t *testing.T, w, h int, c color.NRGBA) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, c.A
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestAgentViews: under agents/NAME/ a mount with Views serves the views
// a store's mount serves — a frame view beside another agent's frame, the
// episode's contact sheet, a map of its grid — rendered from the frames
// fetched into the local cache; names that are no view are missing, and a
// node without Views has none.
func TestAgentViews(t *testing.T) {
	tm := newTeam(t)
	alice := tm.agent("alice", false)
	quiet := slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))
	objs := ObjectsConfig{URL: tm.s3.URL("team"), Endpoint: tm.s3.Endpoint, Access: tm.s3.Access, Secret: tm.s3.Secret}
	start := func(name string, views ViewOpener) *Node {
		s, err := episodes.Init(filepath.Join(t.TempDir(), name))
		if err != nil {
			t.Fatal(err)
		}
		n, err := Start(Config{Store: s, Agent: name, Postgres: tm.pg, Objects: objs, Logger: quiet, Views: views})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(n.Close)
		return n
	}
	bob := start("bob", func(dir string) (ViewRenderer, error) {
		return view.New(&episodes.Store{Root: dir}, view.DefaultLimits())
	})
	carol := start("carol", nil)

	id := alice.w.NextID()
	row, err := fleettest.LifeRow(id, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	grid, err := episodes.GridRow{Cell: [3]int{2, 64, -3}, Kind: episodes.CellWalked, Step: 31, Episode: id}.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	err = alice.w.WriteEpisode(id, episodes.Episode{
		Files: map[string][]byte{
			"observation/image.png": testPNG(t, 40, 30, color.NRGBA{200, 10, 10, 255}),
			"frames/000031.png":     testPNG(t, 40, 30, color.NRGBA{10, 200, 10, 255}),
			"state/state.json":      []byte(`{"step": 30}`),
			"action.json":           []byte(`{}`),
			"outcome.json":          []byte(`{}`),
		},
		Row:  row,
		Grid: [][]byte{grid},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []*Node{bob, carol} {
		waitFor(t, 20*time.Second, "alice's episode followed", func() bool { return n.cat.episode("alice", 1, id) != nil })
	}
	ctx := context.Background()
	decode := func(p string) image.Image {
		t.Helper()
		b, isDir, err := bob.Tree().Open(ctx, p)
		if err != nil || isDir {
			t.Fatalf("agents/%s: isDir %v, err %v", p, isDir, err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("agents/%s: not a PNG: %v", p, err)
		}
		return img
	}
	zoom := decode("alice/episodes/" + id + "/observation/image@zoom=2.png")
	if got := zoom.Bounds().Size(); got != (image.Point{80, 60}) {
		t.Errorf("zoom=2 of a 40x30 frame is %v", got)
	}
	if r, g, _, _ := zoom.At(10, 10).RGBA(); r>>8 != 200 || g>>8 != 10 {
		t.Errorf("zoom=2 pixel is not the frame's red: r=%d g=%d", r>>8, g>>8)
	}
	crop := decode("alice/episodes/" + id + "/frames/000031@crop=0,0,10,10.png")
	if got := crop.Bounds().Size(); got != (image.Point{10, 10}) {
		t.Errorf("crop of frames/000031 is %v", got)
	}
	sheet := decode("alice/episodes/" + id + "/sheet.png")
	if sheet.Bounds().Dx() < 80 {
		t.Errorf("sheet of two frames is %v wide", sheet.Bounds().Dx())
	}
	decode("alice/map/at=0,0.png")
	for _, p := range []string{"alice/episodes/" + id + "/observation/nosuch@zoom=2.png", "alice/episodes/ep_999999/sheet.png"} {
		if _, _, err := bob.Tree().Open(ctx, p); !errors.Is(err, iofs.ErrNotExist) {
			t.Errorf("agents/%s: err %v, want not exist", p, err)
		}
	}
	names, err := bob.Tree().ReadDir(ctx, "alice")
	if err != nil || !contains(names, "map/") {
		t.Errorf("agents/alice lists %v (err %v), want map/", names, err)
	}
	// A query's sheet through the mount's viewer: alice's frame is drawn
	// (red pixels), an unknown one is a placeholder (none).
	local, err := view.New(bob.cfg.Store, view.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	sv := bob.Viewer(local)
	for _, c := range []struct {
		frame string
		red   bool
	}{
		{"agents/alice/episodes/" + id + "/observation/image.png", true},
		{"agents/alice/episodes/ep_999999/observation/image.png", false},
	} {
		b, err := sv.Sheet(ctx, []string{c.frame}, []string{"x"})
		if err != nil {
			t.Fatalf("sheet of %s: %v", c.frame, err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if got := hasColor(img, 200, 10, 10); got != c.red {
			t.Errorf("sheet of %s: frame's red drawn %v, want %v", c.frame, got, c.red)
		}
	}
	if _, _, err := carol.Tree().Open(ctx, "alice/episodes/"+id+"/sheet.png"); !errors.Is(err, iofs.ErrNotExist) {
		t.Errorf("a node without views serves sheet.png: err %v", err)
	}
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

func hasColor(img image.Image, r, g, b uint32) bool {
	bd := img.Bounds()
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
			pr, pg, pb, _ := img.At(x, y).RGBA()
			if pr>>8 == r && pg>>8 == g && pb>>8 == b {
				return true
			}
		}
	}
	return false
}
