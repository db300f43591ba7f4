package task

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// A predicate is a condition on the logged state, written as clauses
// joined by " and ":
//
//	tree>=1                 inventory count of an item (also inv:NAME>=N for any name)
//	crafted:wood>=4         items crafted so far ("craft ITEM N" events, or state extra "crafted")
//	depth>=8                blocks below the start position (start y - y)
//	away>=40                horizontal distance from the start position
//	hurt<=0                 damage taken since the previous milestone (since the start for the first)
//	health>=10, y<=-5       health, or a coordinate (x, y, z)
//	near -70,12,189 r=4     within r blocks of a point (near X,Z r=R: horizontally)
//	near start r=3          within r blocks of the start position, horizontally
//	alive                   health above 0
//
// Comparisons are >=, >, <=, <, == (or =) and != against a number.

// Predicate is a parsed condition.
type Predicate struct {
	Src     string
	Clauses []Clause
}

// Clause kinds.
const (
	ClauseInv     = "inv"
	ClauseCrafted = "crafted"
	ClauseDepth   = "depth"
	ClauseAway    = "away"
	ClauseHurt    = "hurt"
	ClauseHealth  = "health"
	ClauseCoord   = "coord"
	ClauseNear    = "near"
	ClauseAlive   = "alive"
)

// Clause is one condition of a predicate.
type Clause struct {
	Kind  string
	Name  string  // the item (inv, crafted) or coordinate (x, y, z)
	Op    string  // >=, >, <=, <, ==, !=
	Value float64 // the number compared with
	// near: the point (Y ignored when Flat), the radius, FromStart for
	// "near start".
	X, Y, Z   float64
	R         float64
	Flat      bool
	FromStart bool
}

var (
	cmpRe   = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_:.-]*)\s*(>=|<=|==|!=|=|>|<)\s*(-?[0-9]+(?:\.[0-9]+)?)$`)
	nearRe  = regexp.MustCompile(`^near\s+(start|-?[0-9]+(?:\.[0-9]+)?(?:\s*,\s*-?[0-9]+(?:\.[0-9]+)?){1,2})\s+r\s*=\s*([0-9]+(?:\.[0-9]+)?)$`)
	itemRe  = regexp.MustCompile(`^[a-z0-9_]+(?::[a-z0-9_]+)?$`)
	reserve = map[string]string{"depth": ClauseDepth, "away": ClauseAway, "hurt": ClauseHurt, "health": ClauseHealth, "x": ClauseCoord, "y": ClauseCoord, "z": ClauseCoord}
)

// accepted is the list of clause forms an error message names.
const accepted = `ITEM>=N, inv:ITEM>=N, crafted:ITEM>=N, depth>=N, away>=N, hurt<=N, health>=N, x|y|z<=N, "near X,Y,Z r=R", "near X,Z r=R", "near start r=R", alive`

// ParsePredicate parses a predicate.
func ParsePredicate(src string) (Predicate, error) {
	p := Predicate{Src: src}
	if strings.TrimSpace(src) == "" {
		return p, fmt.Errorf("empty condition (want clauses joined by \" and \": %s)", accepted)
	}
	for _, part := range strings.Split(src, " and ") {
		c, err := parseClause(strings.TrimSpace(part))
		if err != nil {
			return Predicate{}, fmt.Errorf("condition %q: %w", src, err)
		}
		p.Clauses = append(p.Clauses, c)
	}
	return p, nil
}

func parseClause(s string) (Clause, error) {
	if s == "" {
		return Clause{}, fmt.Errorf("empty clause (want one of %s)", accepted)
	}
	if s == "alive" {
		return Clause{Kind: ClauseAlive}, nil
	}
	if strings.HasPrefix(s, "near") {
		m := nearRe.FindStringSubmatch(s)
		if m == nil {
			return Clause{}, fmt.Errorf("clause %q: want \"near X,Y,Z r=R\", \"near X,Z r=R\" or \"near start r=R\"", s)
		}
		r, _ := strconv.ParseFloat(m[2], 64)
		c := Clause{Kind: ClauseNear, R: r}
		if m[1] == "start" {
			c.FromStart, c.Flat = true, true
			return c, nil
		}
		var xs []float64
		for _, f := range strings.Split(m[1], ",") {
			v, _ := strconv.ParseFloat(strings.TrimSpace(f), 64)
			xs = append(xs, v)
		}
		if len(xs) == 2 {
			c.X, c.Z, c.Flat = xs[0], xs[1], true
		} else {
			c.X, c.Y, c.Z = xs[0], xs[1], xs[2]
		}
		return c, nil
	}
	m := cmpRe.FindStringSubmatch(s)
	if m == nil {
		return Clause{}, fmt.Errorf("clause %q is not a comparison with a number (want one of %s)", s, accepted)
	}
	name, op := m[1], m[2]
	if op == "=" {
		op = "=="
	}
	v, err := strconv.ParseFloat(m[3], 64)
	if err != nil || math.IsInf(v, 0) {
		return Clause{}, fmt.Errorf("clause %q: %q is not a number", s, m[3])
	}
	c := Clause{Op: op, Value: v}
	switch {
	case reserve[name] != "":
		c.Kind, c.Name = reserve[name], name
	case strings.HasPrefix(name, "crafted:"):
		c.Kind, c.Name = ClauseCrafted, strings.TrimPrefix(name, "crafted:")
	case strings.HasPrefix(name, "inv:"):
		c.Kind, c.Name = ClauseInv, strings.TrimPrefix(name, "inv:")
	default:
		c.Kind, c.Name = ClauseInv, name
	}
	if (c.Kind == ClauseInv || c.Kind == ClauseCrafted) && !itemRe.MatchString(c.Name) {
		return Clause{}, fmt.Errorf("clause %q: %q is not an item name (lower case letters, digits, _; optionally mod:name)", s, c.Name)
	}
	return c, nil
}

func compare(a float64, op string, b float64) bool {
	switch op {
	case ">=":
		return a >= b
	case ">":
		return a > b
	case "<=":
		return a <= b
	case "<":
		return a < b
	case "==":
		return a == b
	case "!=":
		return a != b
	}
	return false
}

// String is the predicate's source.
func (p Predicate) String() string { return p.Src }
