package luanti

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Graph is the task-state graph of a Luanti game as the state mod exports
// it from the game's own registered definitions: every item (type,
// groups, what a node drops, which dig groups a tool reaches, fuel time)
// and every crafting and cooking recipe with counts. Eval metrics use it
// to know what an item needs.
type Graph struct {
	Game    string               `json:"game"`
	Items   map[string]GraphItem `json:"items"`
	Recipes []Recipe             `json:"recipes"`
}

// GraphItem is one registered item.
type GraphItem struct {
	Type        string         `json:"type"` // node, craft, tool
	Description string         `json:"description"`
	StackMax    int            `json:"stack_max"`
	Groups      map[string]int `json:"groups"`
	Drops       []string       `json:"drops"`     // a node's drops (item strings); nil: the node itself
	Walkable    bool           `json:"walkable"`  // a node one stands on
	Digs        map[string]int `json:"digs"`      // a tool's dig groups and the highest level it reaches
	FuelTime    float64        `json:"fuel_time"` // seconds it burns in a furnace (0: not a fuel)
}

// Recipe is one way to make an item.
type Recipe struct {
	Output string `json:"output"`
	Count  int    `json:"count"`  // items made by one craft
	Method string `json:"method"` // "normal" (crafting grid) or "cooking" (furnace)
	Width  int    `json:"width"`  // grid width; 0: shapeless
	// Inputs counts each input per craft; "group:wood" is any item of that
	// group.
	Inputs map[string]int `json:"inputs"`
	Grid   []string       `json:"grid"`           // the grid row by row ("" empty)
	Time   float64        `json:"time,omitempty"` // cooking time in seconds
}

// GraphFile is the name of the export in the world directory.
const GraphFile = "mfm_graph.json"

// ParseGraph decodes and checks an exported graph: it must name items,
// and every recipe must make a known item with a count of at least one by
// a known method from known inputs.
func ParseGraph(b []byte) (*Graph, error) {
	// The mod's JSON writes every number as a double (1.0): decode into
	// floats, then keep the integral ones as ints.
	var raw struct {
		Game  string `json:"game"`
		Items map[string]struct {
			Type, Description string
			StackMax          float64 `json:"stack_max"`
			Groups            map[string]float64
			Drops             []string
			Walkable          bool
			Digs              map[string]float64
			FuelTime          float64 `json:"fuel_time"`
		} `json:"items"`
		Recipes []struct {
			Output, Method string
			Count, Width   float64
			Inputs         map[string]float64
			Grid           []string
			Time           float64
		} `json:"recipes"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("task-state graph: %w", err)
	}
	ints := func(m map[string]float64) map[string]int {
		if m == nil {
			return nil
		}
		out := make(map[string]int, len(m))
		for k, v := range m {
			out[k] = int(v)
		}
		return out
	}
	g := Graph{Game: raw.Game, Items: map[string]GraphItem{}}
	for name, it := range raw.Items {
		g.Items[name] = GraphItem{Type: it.Type, Description: it.Description, StackMax: int(it.StackMax), Groups: ints(it.Groups),
			Drops: it.Drops, Walkable: it.Walkable, Digs: ints(it.Digs), FuelTime: it.FuelTime}
	}
	for _, r := range raw.Recipes {
		g.Recipes = append(g.Recipes, Recipe{Output: r.Output, Count: int(r.Count), Method: r.Method, Width: int(r.Width),
			Inputs: ints(r.Inputs), Grid: r.Grid, Time: r.Time})
	}
	if len(g.Items) == 0 {
		return nil, fmt.Errorf("task-state graph: no items")
	}
	for i, r := range g.Recipes {
		if _, ok := g.Items[r.Output]; !ok {
			return nil, fmt.Errorf("task-state graph: recipe %d makes unknown item %q", i, r.Output)
		}
		if r.Count < 1 {
			return nil, fmt.Errorf("task-state graph: recipe %d for %s makes %d items, want >= 1", i, r.Output, r.Count)
		}
		if r.Method != "normal" && r.Method != "cooking" {
			return nil, fmt.Errorf("task-state graph: recipe %d for %s has method %q, want normal or cooking", i, r.Output, r.Method)
		}
		if len(r.Inputs) == 0 {
			return nil, fmt.Errorf("task-state graph: recipe %d for %s has no inputs", i, r.Output)
		}
		for in, n := range r.Inputs {
			if n < 1 || !g.known(in) {
				return nil, fmt.Errorf("task-state graph: recipe %d for %s: input %q x%d is not a known item or group", i, r.Output, in, n)
			}
		}
	}
	return &g, nil
}

// known reports an item name or a group some item is in.
func (g *Graph) known(in string) bool {
	if grp, ok := strings.CutPrefix(in, "group:"); ok {
		for _, name := range strings.Split(grp, ",") {
			if len(g.Members("group:"+name)) == 0 {
				return false
			}
		}
		return true
	}
	_, ok := g.Items[in]
	return ok
}

// LoadGraph reads an exported graph file.
func LoadGraph(path string) (*Graph, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read task-state graph: %w", err)
	}
	g, err := ParseGraph(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return g, nil
}

// RecipesFor lists the recipes that make item.
func (g *Graph) RecipesFor(item string) []Recipe {
	var out []Recipe
	for _, r := range g.Recipes {
		if r.Output == item {
			out = append(out, r)
		}
	}
	return out
}

// Members lists the items an input stands for, sorted: the item itself, or
// every item in all the groups of "group:a,b".
func (g *Graph) Members(input string) []string {
	grp, ok := strings.CutPrefix(input, "group:")
	if !ok {
		if _, known := g.Items[input]; known {
			return []string{input}
		}
		return nil
	}
	var out []string
	for name, it := range g.Items {
		all := true
		for _, gn := range strings.Split(grp, ",") {
			if it.Groups[gn] == 0 {
				all = false
				break
			}
		}
		if all {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// Graph reads the task-state graph the mod exported (Config.ExportGraph).
func (g *Game) Graph() (*Graph, error) {
	return LoadGraph(filepath.Join(g.cfg.Dir, "world", GraphFile))
}
