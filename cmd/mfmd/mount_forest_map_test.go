package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mfm-project/mfm/episodes"
)

// TestMountForestMap reads a map of the committed Luanti run through the
// kernel: the store declares Luanti's axes, so north is +z without
// @north=+z, ep_000040 (x=-68.957 z=184.528) is in block -69,185 where
// its tower is, and the eight pillar columns count as placed 8 (the
// tower at -69,188 is not drawn as the wall bumped into beside it).
func TestMountForestMap(t *testing.T) {
	canMountView(t)
	committed, err := episodes.Open(filepath.Join("..", "..", "examples", "runs", "luanti-forest", "store"))
	if err != nil {
		t.Fatal(err)
	}
	if committed.Axes() != episodes.LuantiAxes {
		t.Fatalf("the committed Luanti run declares axes %+v, want %+v", committed.Axes(), episodes.LuantiAxes)
	}
	s := copyForestIndex(t)
	if err := s.SetAxes(committed.Axes()); err != nil {
		t.Fatal(err)
	}
	mnt := mountForTest(t, s, filepath.Join(t.TempDir(), "mnt"))
	b, err := os.ReadFile(filepath.Join(mnt, "map", "at=-69,186@r=6.txt"))
	if err != nil {
		t.Fatal(err)
	}
	txt := string(b)
	for _, want := range []string{
		"north=+z (store axes)",
		"placed 8 ",
		"x=-69 z=185: ep_000039 ep_000040",
		"z=188 |  .* .+    ..|", // the tower at -69,188: placed, not blocked
	} {
		if !strings.Contains(txt, want) {
			t.Errorf("map/at=-69,186@r=6.txt lacks %q:\n%s", want, txt)
		}
	}
	if strings.Contains(txt, "x=-69 z=184: ep_000040") {
		t.Errorf("ep_000040 floored into -69,184:\n%s", txt)
	}
}
