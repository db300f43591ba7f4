package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/expr-lang/expr/vm"

	"github.com/mfm-project/mfm/harness"
	"github.com/mfm-project/mfm/internal/strictjson"
	"github.com/mfm-project/mfm/luanti"
)

// Relations of the task-state graph (MC-EvoBench appendix B.2). The first
// three form the strict execution graph that WGP and VMP read; enables and
// abstracts_to are kept but score nothing.
const (
	Requires    = "requires"
	Produces    = "produces"
	Consumes    = "consumes"
	Enables     = "enables"
	AbstractsTo = "abstracts_to"
)

// Edge is one typed relation between a stage (task occurrence) and a state
// of the task-state graph. State is "item:NAME", "tool:NAME" or
// "group:NAME" (an item group: any member counts) for items and tools,
// anything else ("environment:spawned_world", "location:coal_seen") for
// states that are not inventory. Count is the declared quantity; it is
// the edge's weight in WGP and the state's threshold in VMP (default 1).
type Edge struct {
	Relation string  `json:"relation"`
	State    string  `json:"state"`
	Count    float64 `json:"count,omitempty"`
}

// Strict reports whether the edge is an execution edge (requires,
// produces, consumes).
func (e Edge) Strict() bool {
	return e.Relation == Requires || e.Relation == Produces || e.Relation == Consumes
}

// Weight is the edge's weight: its count, one when unspecified.
func (e Edge) Weight() float64 {
	if e.Count <= 0 {
		return 1
	}
	return e.Count
}

// Make asks for a stage's edges from the game's own task-state graph (the
// mod's export, luanti.Graph): making Count of Item. With a recipe, the
// stage requires and consumes the recipe's inputs for enough crafts and
// produces Item; without one, Item must drop from some node and the stage
// produces it. With lists further states required once each (the tool
// that digs the node, the furnace that cooks), which must be known items.
// When several recipes make Item, From (an input the recipe uses: an item
// or "group:NAME") and Method ("normal" or "cooking") say which; Method
// "dig" takes Item from a node that drops it (From: that node) even when
// a recipe makes it too.
type Make struct {
	Item   string   `json:"item"`
	Count  int      `json:"count,omitempty"`
	From   string   `json:"from,omitempty"`
	Method string   `json:"method,omitempty"`
	With   []string `json:"with,omitempty"`
}

// Stage is one planned stage occurrence: a verifier (an expr-lang
// condition over a recorded state, as mfm-when: `inventory.stick >= 4`),
// its graph edges (given, or made from the graph) and its step cap.
// Stage ids may repeat: a repeated task is a separate occurrence.
type Stage struct {
	ID       string `json:"id"`
	Verifier string `json:"verifier"`
	// MaxSteps caps the steps the stage may take from the step where the
	// previous stage passed (the run's first step for the first stage);
	// 0 takes the chain's MaxStageSteps, and both 0 means no cap.
	MaxSteps int    `json:"max_steps,omitempty"`
	Make     *Make  `json:"make,omitempty"`
	Edges    []Edge `json:"edges,omitempty"`

	prog *vm.Program
}

// Chain is an ordered task chain with its task-state graph edges
// (docs/AUDIT.md). ParseChain and LoadChain build and check one; a Chain
// built as a Go value evaluates too, but its group: states count nothing
// (their members come from the graph at parse time).
type Chain struct {
	Name string `json:"name"`
	// Graph is the exported task-state graph the stages' "make" entries
	// read, relative to the chain file.
	Graph string `json:"graph,omitempty"`
	// MaxStageSteps is every stage's step cap unless the stage sets one.
	MaxStageSteps int     `json:"max_stage_steps,omitempty"`
	Stages        []Stage `json:"stages"`

	// groups holds, per group state, the item names that count for it.
	groups map[string][]string
}

// ParseChain decodes and validates a chain. g is the task-state graph the
// stages' "make" entries and "group:" states need; it may be nil when no
// stage uses them.
func ParseChain(b []byte, g *luanti.Graph) (*Chain, error) {
	var c Chain
	if err := strictjson.Decode(b, &c); err != nil {
		return nil, fmt.Errorf("chain: %w", err)
	}
	if len(c.Stages) == 0 {
		return nil, errors.New(`chain: no "stages"`)
	}
	if c.MaxStageSteps < 0 {
		return nil, fmt.Errorf("chain: max_stage_steps %d < 0", c.MaxStageSteps)
	}
	c.groups = map[string][]string{}
	for i := range c.Stages {
		s := &c.Stages[i]
		where := fmt.Sprintf("chain: stages[%d] %q", i, s.ID)
		if s.ID == "" {
			return nil, fmt.Errorf("chain: stages[%d]: missing id", i)
		}
		if s.Verifier == "" {
			return nil, fmt.Errorf("%s: missing verifier", where)
		}
		if s.MaxSteps < 0 {
			return nil, fmt.Errorf("%s: max_steps %d < 0", where, s.MaxSteps)
		}
		p, err := harness.CompileCondition(s.Verifier)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		s.prog = p
		if s.Make != nil {
			if g == nil {
				return nil, fmt.Errorf("%s: \"make\" needs the task-state graph (chain \"graph\")", where)
			}
			made, err := edgesFromGraph(g, *s.Make)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			s.Edges = append(made, s.Edges...)
		}
		for j, e := range s.Edges {
			switch e.Relation {
			case Requires, Produces, Consumes, Enables, AbstractsTo:
			default:
				return nil, fmt.Errorf("%s: edges[%d]: relation %q (want requires, produces, consumes, enables or abstracts_to)", where, j, e.Relation)
			}
			kind, name, ok := strings.Cut(e.State, ":")
			if !ok || kind == "" || name == "" {
				return nil, fmt.Errorf("%s: edges[%d]: state %q (want KIND:NAME, e.g. item:default:wood)", where, j, e.State)
			}
			if e.Count < 0 {
				return nil, fmt.Errorf("%s: edges[%d]: count %g < 0", where, j, e.Count)
			}
			if kind == "group" {
				if g == nil {
					return nil, fmt.Errorf("%s: edges[%d]: %s needs the task-state graph to know its members", where, j, e.State)
				}
				m := g.Members(e.State)
				if len(m) == 0 {
					return nil, fmt.Errorf("%s: edges[%d]: no item of the graph is in %s", where, j, e.State)
				}
				c.groups[e.State] = m
			}
		}
	}
	return &c, nil
}

// LoadChain reads a chain file, with the task-state graph it names
// (relative to the chain file).
func LoadChain(path string) (*Chain, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read chain: %w", err)
	}
	var head struct {
		Graph string `json:"graph"`
	}
	_ = json.Unmarshal(b, &head) // ParseChain reports a malformed file
	var g *luanti.Graph
	if head.Graph != "" {
		gp := head.Graph
		if !filepath.IsAbs(gp) {
			gp = filepath.Join(filepath.Dir(path), gp)
		}
		if g, err = luanti.LoadGraph(gp); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	c, err := ParseChain(b, g)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// stateOf names an item of the graph as a state: tool:NAME for tools,
// group:G for a group input, item:NAME otherwise.
func stateOf(g *luanti.Graph, name string) string {
	if strings.HasPrefix(name, "group:") {
		return name
	}
	if g.Items[name].Type == "tool" {
		return "tool:" + name
	}
	return "item:" + name
}

// edgesFromGraph derives a stage's execution edges from the game's own
// definitions (see Make).
func edgesFromGraph(g *luanti.Graph, m Make) ([]Edge, error) {
	if m.Count < 0 {
		return nil, fmt.Errorf("make %s: count %d < 0", m.Item, m.Count)
	}
	want := m.Count
	if want == 0 {
		want = 1
	}
	if _, ok := g.Items[m.Item]; !ok {
		return nil, fmt.Errorf("make %s: not an item of the task-state graph", m.Item)
	}
	var out []Edge
	for _, w := range m.With {
		if _, ok := g.Items[w]; !ok {
			return nil, fmt.Errorf("make %s: with %s: not an item of the task-state graph", m.Item, w)
		}
		out = append(out, Edge{Relation: Requires, State: stateOf(g, w), Count: 1})
	}
	if m.Method == "dig" {
		src := dropSources(g, m.Item)
		if len(src) == 0 || (m.From != "" && !slices.Contains(src, m.From)) {
			return nil, fmt.Errorf("make %s: dig: no node %s drops it (nodes that do: %v)", m.Item, m.From, src)
		}
		return append(out, Edge{Relation: Produces, State: stateOf(g, m.Item), Count: float64(want)}), nil
	}
	r, ok, err := pickRecipe(g.RecipesFor(m.Item), m)
	if err != nil {
		return nil, err
	}
	if ok {
		crafts := (want + r.Count - 1) / r.Count
		ins := make([]string, 0, len(r.Inputs))
		for in := range r.Inputs {
			ins = append(ins, in)
		}
		sort.Strings(ins)
		for _, in := range ins {
			n := float64(r.Inputs[in] * crafts)
			out = append(out, Edge{Relation: Requires, State: stateOf(g, in), Count: n},
				Edge{Relation: Consumes, State: stateOf(g, in), Count: n})
		}
		return append(out, Edge{Relation: Produces, State: stateOf(g, m.Item), Count: float64(want)}), nil
	}
	if m.From != "" || m.Method != "" {
		return nil, fmt.Errorf("make %s: from/method given but no recipe makes it", m.Item)
	}
	if len(dropSources(g, m.Item)) == 0 {
		return nil, fmt.Errorf("make %s: the graph has no recipe for it and no node drops it", m.Item)
	}
	return append(out, Edge{Relation: Produces, State: stateOf(g, m.Item), Count: float64(want)}), nil
}

// pickRecipe chooses the recipe m asks for among those that make its
// item: the only one, or the only one using m.From by m.Method. ok is
// false when no recipe makes the item (it may drop from a node).
func pickRecipe(rs []luanti.Recipe, m Make) (r luanti.Recipe, ok bool, err error) {
	if len(rs) == 0 {
		return r, false, nil
	}
	var fit []luanti.Recipe
	var forms []string
	for _, r := range rs {
		ins := make([]string, 0, len(r.Inputs))
		for in := range r.Inputs {
			ins = append(ins, in)
		}
		sort.Strings(ins)
		forms = append(forms, r.Method+" from "+strings.Join(ins, "+"))
		if m.Method != "" && r.Method != m.Method {
			continue
		}
		if m.From != "" && r.Inputs[m.From] == 0 {
			continue
		}
		fit = append(fit, r)
	}
	switch len(fit) {
	case 1:
		return fit[0], true, nil
	case 0:
		return r, false, fmt.Errorf("make %s: no recipe from %q by %q (the graph has: %s)", m.Item, m.From, m.Method, strings.Join(forms, "; "))
	}
	return r, false, fmt.Errorf("make %s: %d recipes fit (%s); say which with \"from\" (an input) or \"method\"", m.Item, len(fit), strings.Join(forms, "; "))
}

// dropSources lists the nodes digging which yields item (the node itself
// when it declares no drops).
func dropSources(g *luanti.Graph, item string) []string {
	var out []string
	for name, it := range g.Items {
		if it.Type != "node" {
			continue
		}
		if it.Drops == nil && name == item {
			out = append(out, name)
			continue
		}
		for _, d := range it.Drops {
			if f := strings.Fields(d); len(f) > 0 && f[0] == item {
				out = append(out, name)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}
