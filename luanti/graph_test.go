package luanti

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// checkGraphFacts checks what minetest_game's own definitions say about
// the first stages of its tech tree.
func checkGraphFacts(t *testing.T, g *Graph) {
	t.Helper()
	for _, c := range []struct {
		item, method string
		count        int
		inputs       map[string]int
	}{
		{"default:wood", "normal", 4, map[string]int{"default:tree": 1}},
		{"default:stick", "normal", 4, map[string]int{"group:wood": 1}},
		{"default:pick_wood", "normal", 1, map[string]int{"group:wood": 3, "group:stick": 2}},
		{"default:pick_stone", "normal", 1, map[string]int{"group:stone": 3, "group:stick": 2}},
		{"default:furnace", "normal", 1, map[string]int{"group:stone": 8}},
		{"default:torch", "normal", 4, map[string]int{"default:coal_lump": 1, "group:stick": 1}},
		{"default:steel_ingot", "cooking", 1, map[string]int{"default:iron_lump": 1}},
	} {
		found := false
		for _, r := range g.RecipesFor(c.item) {
			found = found || (r.Method == c.method && r.Count == c.count && mapsEqual(r.Inputs, c.inputs))
		}
		if !found {
			t.Errorf("%s: no %s recipe making %d from %v among %+v", c.item, c.method, c.count, c.inputs, g.RecipesFor(c.item))
		}
	}
	for _, r := range g.RecipesFor("default:steel_ingot") {
		if r.Method == "cooking" && r.Inputs["default:iron_lump"] == 1 && r.Time <= 0 {
			t.Errorf("steel ingot from iron lump: cooking time %g, want > 0", r.Time)
		}
	}
	if g.Items["default:tree"].FuelTime <= 0 || g.Items["default:coal_lump"].FuelTime <= 0 {
		t.Errorf("tree and coal burn: fuel times %g, %g", g.Items["default:tree"].FuelTime, g.Items["default:coal_lump"].FuelTime)
	}
	if d := g.Items["default:stone"].Drops; !slices.Equal(d, []string{"default:cobble"}) {
		t.Errorf("stone drops %v, want cobble", d)
	}
	if g.Items["default:pick_wood"].Digs["cracky"] < 0 || g.Items["default:pick_wood"].Type != "tool" {
		t.Errorf("wooden pickaxe: %+v, want a tool that digs cracky", g.Items["default:pick_wood"])
	}
	if !slices.Contains(g.Members("group:wood"), "default:wood") || !slices.Contains(g.Members("group:wood"), "default:junglewood") {
		t.Errorf("group:wood members %v", g.Members("group:wood"))
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestCommittedGraph loads the committed export of minetest_game.
func TestCommittedGraph(t *testing.T) {
	g, err := LoadGraph("testdata/minetest_game_graph.json")
	if err != nil {
		t.Fatal(err)
	}
	if g.Game != "minetest_game" || len(g.Items) < 500 || len(g.Recipes) < 300 {
		t.Fatalf("committed graph: game %q, %d items, %d recipes", g.Game, len(g.Items), len(g.Recipes))
	}
	checkGraphFacts(t, g)
}

func TestParseGraphErrors(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"not json", `{`, "task-state graph"},
		{"no items", `{"items":{}}`, "no items"},
		{"unknown output", `{"items":{"a:b":{}},"recipes":[{"output":"a:c","count":1,"method":"normal","inputs":{"a:b":1}}]}`, `unknown item "a:c"`},
		{"zero count", `{"items":{"a:b":{}},"recipes":[{"output":"a:b","count":0,"method":"normal","inputs":{"a:b":1}}]}`, "makes 0 items"},
		{"bad method", `{"items":{"a:b":{}},"recipes":[{"output":"a:b","count":1,"method":"fuel","inputs":{"a:b":1}}]}`, `method "fuel"`},
		{"no inputs", `{"items":{"a:b":{}},"recipes":[{"output":"a:b","count":1,"method":"normal"}]}`, "no inputs"},
		{"unknown group", `{"items":{"a:b":{}},"recipes":[{"output":"a:b","count":1,"method":"normal","inputs":{"group:x":1}}]}`, `"group:x"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseGraph([]byte(c.in))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("ParseGraph(%s): %v, want an error containing %q", c.in, err, c.want)
			}
		})
	}
	if _, err := ParseGraph([]byte(`{"items":{"a:b":{"groups":{"x":1}}},"recipes":[{"output":"a:b","count":2,"method":"normal","inputs":{"group:x":1}}]}`)); err != nil {
		t.Fatalf("a valid graph: %v", err)
	}
}

func FuzzParseGraph(f *testing.F) {
	if b, err := os.ReadFile("testdata/minetest_game_graph.json"); err == nil && len(b) < 1<<16 {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := ParseGraph(b)
		if err != nil {
			return
		}
		for _, r := range g.Recipes {
			if _, ok := g.Items[r.Output]; !ok || r.Count < 1 {
				t.Fatalf("accepted a recipe for an unknown item or no count: %+v", r)
			}
			for in := range r.Inputs {
				if len(g.Members(in)) == 0 {
					t.Fatalf("accepted input %q that stands for no item", in)
				}
			}
		}
	})
}
