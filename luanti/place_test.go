package luanti

import (
	"strings"
	"testing"
)

// TestPlaceWhy: a place that left nothing says why, from the state.
func TestPlaceWhy(t *testing.T) {
	pointed := func(node string, above Vec, aboveNode string) any {
		return map[string]any{"node": node, "under": map[string]any{"x": above.X, "y": above.Y - 1, "z": above.Z},
			"above": map[string]any{"x": above.X, "y": above.Y, "z": above.Z}, "above_node": aboveNode, "dist": 2.0}
	}
	water := map[string]any{"node": "default:water_source", "pos": map[string]any{"x": 3.0, "y": 11.0, "z": 5.0}}
	at := Vec{3.0, 10.5, 5.2} // the feet node is 3,11,5
	cases := []struct {
		name string
		raw  Raw
		want string
	}{
		{"swimming", Raw{Pos: at, Liquid: water}, "you are in water, the crosshair looks through it"},
		{"out of reach", Raw{Pos: at}, "nothing in reach to place on (within 5 blocks)"},
		{"spot in water", Raw{Pos: at, Pointed: pointed("default:sand", Vec{4, 11, 6}, "default:water_source")}, "the spot 4,11,6 is in water (a torch is washed away there"},
		{"spot taken", Raw{Pos: at, Pointed: pointed("default:stone", Vec{4, 11, 6}, "default:ladder_wood")}, "the spot 4,11,6 is taken by ladder_wood"},
		{"where the player stands", Raw{Pos: at, Pointed: pointed("default:stone", Vec{3, 12, 5}, "air")}, "the spot 3,12,5 is where you stand"},
		{"refused", Raw{Pos: at, Pointed: pointed("default:stone", Vec{4, 11, 6}, "air")}, "nothing was placed on stone at 4,11,6 (the block would overlap the player, or the game refused it"},
	}
	for _, c := range cases {
		if got := placeWhy(c.raw, "default:torch"); !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want it to say %q", c.name, got, c.want)
		}
	}
}

// TestHazard: where the nearest liquid is (under the feet, ahead, near)
// and what lies under the floor, as the state's hazard says it.
func TestHazard(t *testing.T) {
	liquid := func(node string, x, y, z float64) any {
		return map[string]any{"node": node, "pos": map[string]any{"x": x, "y": y, "z": z}}
	}
	at := Vec{3.0, 10.5, 5.2} // feet node 3,11,5; yaw 0 faces +z
	cases := []struct {
		name string
		raw  Raw
		want string
	}{
		{"nothing", Raw{Pos: at}, ""},
		{"under the feet", Raw{Pos: at, Liquid: liquid("default:lava_source", 3, 9, 5)}, "lava under your feet, 2 block(s) away at 3,9,5"},
		{"ahead", Raw{Pos: at, Liquid: liquid("default:water_flowing", 3, 11, 7)}, "water ahead, 2 block(s) away at 3,11,7"},
		{"behind, below", Raw{Pos: at, Yaw: 180, Liquid: liquid("default:river_water_source", 3, 10, 7)}, "river water near, below, 2 block(s) away"},
		{"cave", Raw{Pos: at, UnderFloor: map[string]any{"node": "air", "depth": 4.0, "pos": map[string]any{"x": 3.0, "y": 7.0, "z": 5.0}}},
			"open space (a cave) under 3 block(s) of floor at 3,7,5: digging down falls into it"},
		{"lake", Raw{Pos: at, UnderFloor: map[string]any{"node": "default:water_source", "depth": 2.0, "pos": map[string]any{"x": 3.0, "y": 9.0, "z": 5.0}}},
			"water under 1 block(s) of floor at 3,9,5"},
	}
	for _, c := range cases {
		got := c.raw.Hazard()
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: hazard %q, want %q", c.name, got, c.want)
		}
	}
}
