package query

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mfm-project/mfm/episodes"
)

func TestParse(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		in   string
		want Query
	}{
		{"tree", Query{Words: [][]string{{"tree"}}}},
		{`"Nearest Tree" cave`, Query{Words: [][]string{{"nearest", "tree"}, {"cave"}}}},
		{"mine_ahead", Query{Words: [][]string{{"mine", "ahead"}}}},
		{"tag:stuck -tag:note tag:fall", Query{Tags: []string{"stuck", "fall"}, NotTags: []string{"note"}}},
		{"action:go_to action:look", Query{Actions: []string{"go_to", "look"}}},
		{"event:hurt event:Fall_Damage", Query{Events: [][]string{{"hurt"}, {"fall", "damage"}}}},
		{"steps:5..5", Query{Steps: &IntRange{5, 5}}},
		{"near:-3010,-5569", Query{Near: &Near{X: -3010, Z: -5569, R: DefaultRadius}}},
		{"r:8 near:1,2,3", Query{Near: &Near{X: 1, Y: 2, Z: 3, R: 8, ThreeD: true}}},
		{"near:1.5,-2 r:0", Query{Near: &Near{X: 1.5, Z: -2, R: 0}}},
		{"y:<20", Query{Y: &FloatRange{Min: math.Inf(-1), Max: 20, MaxExclusive: true}}},
		{"y:>-5.5", Query{Y: &FloatRange{Min: -5.5, Max: inf, MinExclusive: true}}},
		{"y:-5..10", Query{Y: &FloatRange{Min: -5, Max: 10}}},
		{"life:2", Query{Life: 2}},
		{"life:all", Query{AllLives: true}},
		{"last:20", Query{Last: 20}},
		{"in:mine bucket", Query{InMine: true, Words: [][]string{{"bucket"}}}},
		{"agent:alice tag:stuck", Query{Agent: "alice", Tags: []string{"stuck"}}},
		{"agent:b0t-2.x_y", Query{Agent: "b0t-2.x_y"}},
		{"agent:all last:5", Query{AllAgents: true, Last: 5}},
		{"since:2026-12-02", Query{Since: time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)}},
		{"until:2026-12-02", Query{Until: time.Date(2026, 12, 2, 23, 59, 59, 999999999, time.UTC)}},
		{"since:2026-12-02T21:05:00Z", Query{Since: time.Date(2026, 12, 2, 21, 5, 0, 0, time.UTC)}},
		{"  tag:a\t last:1  ", Query{Tags: []string{"a"}, Last: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("Parse(%q)\n got %+v\nwant %+v", tt.in, *got, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ in, term, msg string }{
		{"", "", "empty query"},
		{"   ", "", "empty query"},
		{"steps:5..", "steps:5..", "A..B"},
		{"steps:9..3", "steps:9..3", "A <= B"},
		{"steps:-1..3", "steps:-1..3", "0 <= A"},
		{"steps:1..2 steps:3..4", "steps:3..4", "given twice"},
		{"near:1", "near:1", "X,Z or X,Y,Z"},
		{"near:1,x", "near:1,x", "not a number"},
		{"near:1,NaN", "near:1,NaN", "not a number"},
		{"r:5", "r:5", "needs a near:"},
		{"near:1,2 r:-1", "r:-1", "radius >= 0"},
		{"y:abc", "y:abc", "A..B, <N or >N"},
		{"y:5..1", "y:5..1", "A..B"},
		{"life:0", "life:0", "life number >= 1"},
		{"life:x", "life:x", "or all"},
		{"last:0", "last:0", ">= 1"},
		{"last:many", "last:many", ">= 1"},
		{"since:yesterday", "since:yesterday", "RFC 3339"},
		{"since:2026-12-03 until:2026-12-02", "until:2026-12-02", "before since"},
		{"in:theirs", "in:theirs", "only in:mine"},
		{"colour:red", "colour:red", "unknown term \"colour:\""},
		{"event:", "event:", "a word of an event line"},
		{"event:+-", "event:+-", "a word of an event line"},
		{"agent:", "agent:", "agent name"},
		{"agent:Alice", "agent:Alice", "agent name"},
		{"agent:-x", "agent:-x", "agent name"},
		{"agent:a/b", "agent:a/b", "agent name"},
		{"agent:a agent:b", "agent:b", "given twice"},
		{"tag:", "tag:", "tag name"},
		{"-tree", "-tree", "only tags can be negated"},
		{`"unterminated`, `"unterminated`, "unterminated phrase"},
		{`ab"c`, `ab"c`, "quote may only start"},
		{`""`, `""`, "at least one letter"},
		{"---", "---", "only tags can be negated"},
		{"...", "...", "at least one letter"},
		{strings.Repeat("a", MaxLen+1), "", "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := Parse(tt.in)
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q) = %v, want a *query.Error", tt.in, err)
			}
			if pe.Term != tt.term || !strings.Contains(pe.Msg, tt.msg) {
				t.Errorf("Parse(%q) = term %q msg %q; want term %q, msg containing %q", tt.in, pe.Term, pe.Msg, tt.term, tt.msg)
			}
		})
	}
}

func row(t *testing.T, js string) *episodes.Row {
	t.Helper()
	r, err := episodes.ParseRow([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return &r
}

func TestMatch(t *testing.T) {
	r := row(t, `{"id":"ep_000007","path":"episodes/ep_000007","first_step":100,"last_step":120,`+
		`"action_kind":"mine_ahead","summary":"[ACTION] mine_ahead() -> dug a Tree trunk","tags":["milestone","wood"],`+
		`"note":"found the cave entrance","x":3.0,"y":4.0,"z":0.0,"time":"2026-12-02T21:05:00.5Z"}`)
	initial := row(t, `{"id":"ep_000000","first_step":0,"last_step":0,"action_kind":null,"summary":"initial state","tags":["initial"],"x":0,"y":0,"z":0}`)
	tests := []struct {
		q    string
		r    *episodes.Row
		want bool
	}{
		{"tree", r, true},
		{"TREE trunk", r, true},
		{`"tree trunk"`, r, true},
		{`"trunk tree"`, r, false},
		{"tre", r, false}, // whole words, not substrings
		{"cave entrance", r, true},
		{`"dug a tree"`, r, true},
		{"mine_ahead", r, true},
		{"wood", r, true},
		{"milestone wood", r, true},
		{`"milestone wood"`, r, false}, // a phrase does not span two tags
		{"tag:wood", r, true},
		{"tag:Wood", r, false}, // tags are exact
		{"-tag:wood", r, false},
		{"-tag:stuck", r, true},
		{"action:mine_ahead", r, true},
		{"action:go_to", r, false},
		{"action:go_to action:mine_ahead", r, true},
		{"action:go_to", initial, false},
		{"steps:120..130", r, true}, // overlap at the edge
		{"steps:0..100", r, true},
		{"steps:121..200", r, false},
		{"steps:0..99", r, false},
		{"steps:105..110", r, true}, // inside
		{"near:0,0 r:3", r, true},   // x/z distance exactly 3: on the boundary
		{"near:0,0 r:2.999", r, false},
		{"near:0,0,0 r:5", r, true}, // 3D distance exactly 5
		{"near:0,0,0 r:4.999", r, false},
		{"near:0,0", r, true}, // default radius 6
		{"near:7,0", r, true}, // 4 away
		{"near:9.5,0", r, false},
		{"y:4..4", r, true},
		{"y:<4", r, false},
		{"y:<4.01", r, true},
		{"y:>4", r, false},
		{"y:>3.99", r, true},
		{"since:2026-12-02", r, true},
		{"since:2026-12-02T21:05:01Z", r, false},
		{"until:2026-12-02T21:05:00Z", r, false}, // the row is half a second later
		{"until:2026-12-02", r, true},
		{"since:2026-01-01", initial, false}, // no time: cannot be placed
		{"in:mine tree", r, true},            // words apply to the citing paragraph, not the row
		{"tree tag:wood action:mine_ahead steps:110..111 near:3,4,0 r:0 y:>0", r, true},
	}
	for _, tt := range tests {
		t.Run(tt.q, func(t *testing.T) {
			q, err := Parse(tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if got := q.Match(tt.r); got != tt.want {
				t.Errorf("Match(%q, %s) = %v, want %v", tt.q, tt.r.ID, got, tt.want)
			}
		})
	}
}

func TestWantsLife(t *testing.T) {
	tests := []struct {
		q             string
		life, current int
		want          bool
	}{
		{"last:1", 3, 3, true},
		{"last:1", 2, 3, false},
		{"life:2", 2, 3, true},
		{"life:2", 3, 3, false},
		{"life:all", 1, 3, true},
	}
	for _, tt := range tests {
		q, err := Parse(tt.q)
		if err != nil {
			t.Fatal(err)
		}
		if got := q.WantsLife(tt.life, tt.current); got != tt.want {
			t.Errorf("%q.WantsLife(%d, %d) = %v", tt.q, tt.life, tt.current, got)
		}
	}
}

func TestTokens(t *testing.T) {
	got := Tokens("[ACTION] mine_ahead(x=-3) -> Dug 2 Bäume")
	want := []string{"action", "mine", "ahead", "x", "3", "dug", "2", "bäume"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Tokens = %q, want %q", got, want)
	}
}
