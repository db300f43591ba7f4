package luanti

import (
	"strings"
	"testing"
)

// TestOutOfReach: a pointed block further from the eye than the held
// item reaches is named with its distance; one within reach is not.
func TestOutOfReach(t *testing.T) {
	tests := []struct {
		name  string
		reach float64
		dist  float64
		want  string
	}{
		{"beyond the default reach", 0, 4.6, "the tree at -70,12,189 is 4.6 blocks from your eye, out of reach (the game digs within 4): walk closer first, e.g. go_to x=-70 z=189 within=2"},
		{"within the default reach", 0, 3.9, ""},
		{"a longer reach", 6, 4.6, ""},
		{"beyond a shorter reach", 3, 3.5, "out of reach (the game digs within 3)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := Raw{Reach: tc.reach}
			got := outOfReach(s, &Pointed{Node: "default:tree", Under: Vec{-70, 12, 189}, Dist: tc.dist})
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("outOfReach = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestLiveDigNotes plays what confused agents: craft's n counts items
// (whole runs, said in the note), mine_ahead at a block out of reach
// fails at once saying how far it is, a drop left out of pickup range is
// named with where it lies, and dig_down ends with its drop picked up.
func TestLiveDigNotes(t *testing.T) {
	c, _ := liveGame(t, []string{"default:tree 3", "default:pick_stone", "default:axe_stone"})
	inv := func(item string) float64 { return c.Cur.Inventory[fullName(item)] }

	r := must(t, "craft wood n=5")(c.Craft("wood", 5))
	if !strings.Contains(r.Note, "crafted 8 wood from 2 tree (2 runs of 1 tree → 4 wood)") || inv("wood") != 8 || inv("tree") != 1 {
		t.Errorf("craft wood n=5 from 3 tree: %q, wood %g, tree %g; want 8 wood made in 2 runs, 1 tree left", r.Note, inv("wood"), inv("tree"))
	}
	if r, err := c.Craft("wood", 9); err != nil || r.OK || !strings.Contains(r.Note, "made 4 of 9 wood (1 run of 1 tree → 4 wood), then missing 1 tree") {
		t.Errorf("craft wood n=9 from 1 tree: ok=%v %q %v; want a failure saying 4 were made and a tree is missing", r.OK, r.Note, err)
	}
	// no tree left: wood has two recipes lacking one item each (tree,
	// bush_stem); the note names both, not the first the game lists
	if r, err := c.Craft("wood", 1); err != nil || r.OK || !strings.Contains(r.Note, "1 tree") || !strings.Contains(r.Note, "1 bush_stem") {
		t.Errorf("craft wood with no tree: ok=%v %q %v; want a failure naming 1 tree and 1 bush_stem", r.OK, r.Note, err)
	}

	// Face +z over cleared ground: a stone 5 blocks ahead at eye level
	// (pointed, the state looks 5 blocks far) and a trunk 3 ahead.
	must(t, "face +z")(c.LookAbs(0, 0))
	px, py, pz := round0(c.Cur.Pos.X), round0(c.Cur.Pos.Y), round0(c.Cur.Pos.Z)
	set := func(dy, dz float64, node string) {
		t.Helper()
		must(t, "setnode")(c.Command("setnode", map[string]any{"pos": Vec{px, py + dy, pz + dz}, "node": node}))
	}
	for dz := 1.0; dz <= 4; dz++ {
		for dy := 0.0; dy <= 2; dy++ {
			set(dy, dz, "air")
		}
		set(-1, dz, "default:stone")
	}
	set(1, 5, "default:stone")
	must(t, "look at the far stone")(c.LookAt(int(px), int(py+1), int(pz+5)))
	step0 := c.Step
	r, err := c.MineAhead()
	if err != nil || r.OK || !strings.Contains(r.Note, "out of reach") || c.Step-step0 > 5 {
		t.Errorf("mine_ahead at a stone 5 blocks away: ok=%v %q after %d steps, err %v; want an out-of-reach failure at once", r.OK, r.Note, c.Step-step0, err)
	}
	t.Logf("mine_ahead out of reach: %s (%d steps)", r.Note, c.Step-step0)

	set(0, 3, "default:tree")
	must(t, "equip axe")(c.Equip("axe_stone"))
	must(t, "look at the trunk")(c.LookAt(int(px), int(py), int(pz+3)))
	r = must(t, "mine the trunk")(c.MineAhead())
	if !strings.Contains(r.Note, "the drop (tree) is on the ground at ") || !strings.Contains(r.Note, "collect_drops item=tree picks it up") {
		t.Errorf("mine_ahead 3 blocks from a trunk: %q, want where its drop lies", r.Note)
	}

	// dig_down through stone: the cobble is in the inventory when it ends.
	set(-1, 0, "default:stone")
	set(-2, 0, "default:stone")
	must(t, "equip pick")(c.Equip("pick_stone"))
	r = must(t, "dig_down")(c.DigDown(1))
	if inv("cobble") != 1 || strings.Contains(r.Note, "on the ground") {
		t.Errorf("dig_down 1 through stone: %q, cobble %g at its end; want the cobble picked up in the atom", r.Note, inv("cobble"))
	}
	found := false
	for _, e := range c.LastEvents {
		found = found || strings.HasPrefix(e, "pick_up cobble")
	}
	if !found {
		t.Errorf("dig_down's episode events %v lack the cobble's pick-up", c.LastEvents)
	}
}
