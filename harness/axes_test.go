package harness

import (
	"testing"

	"github.com/mfm-project/mfm/episodes"
)

// TestGridCellsFollowStoreAxes: a walked cell is the block the store's
// axes put the position in (Luanti rounds: z=184.528 is block 185, the
// block the game names for a node placed there; Minecraft floors: 184),
// and a recorder takes the axes the store declares.
func TestGridCellsFollowStoreAxes(t *testing.T) {
	start := st(0, -68, 10.5, 184)
	at := st(1, -68.957, 10.5, 184.528)
	for _, c := range []struct {
		axes episodes.Axes
		want [3]int
	}{
		{episodes.Axes{}, [3]int{-69, 10, 184}},
		{episodes.LuantiAxes, [3]int{-69, 11, 185}},
	} {
		rows, _ := GridRows("ep_000001", Call{Kind: "go_to"}, start, []Step{{State: at}}, nil, Options{Axes: c.axes})
		if len(rows) == 0 || rows[0].Kind != episodes.CellWalked || rows[0].Cell != c.want {
			t.Errorf("axes %+v: rows %+v, want a walked cell %v", c.axes, rows, c.want)
		}
	}
	s := newStore(t)
	if err := s.SetAxes(episodes.LuantiAxes); err != nil {
		t.Fatal(err)
	}
	r, err := NewRecorder(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.opt.Axes != episodes.LuantiAxes {
		t.Errorf("the recorder's axes %+v, want the store's %+v", r.opt.Axes, episodes.LuantiAxes)
	}
}
