package query

import (
	"testing"
)

// TestMatchTerm: a row matches a query exactly when it matches each of
// its terms, and each term is read as Describe says.
func TestMatchTerm(t *testing.T) {
	r := row(t, `{"id":"ep_000007","first_step":10,"last_step":20,"action_kind":"pillar_up","summary":"pillar_up placed 13","tags":["placed","note"],"events":["hurt fall 10"],"x":-69,"y":22.5,"z":184.5,"time":"2026-12-02T22:50:00Z"}`)
	tests := []struct {
		query string
		match []bool   // per term
		desc  []string // per term
	}{
		{`near:-69,185,22 tag:placed`, []bool{false, true}, []string{"near: x=-69 y=185 z=22 r=6, 3D distance: the second number is the height y", `tag: has the tag "placed"`}},
		{`near:-69,22,185 r:1 -tag:stuck`, []bool{true, true, true}, []string{"near: x=-69 y=22 z=185 r=1, 3D distance: the second number is the height y", "r: the radius of near: is 1, applied with near:", `-tag: does not have the tag "stuck"`}},
		{`action:go_to action:pillar_up "placed 13" event:fall`, []bool{true, true, true, true}, []string{`action: the action kind is one of "go_to", "pillar_up" (all action: terms together)`, "", `phrase "placed 13", these words in a row in summary, tags, action kind, note or events`, `event: an event line has the words "fall"`}},
		{`y:<20 steps:0..9 since:2026-12-03`, []bool{false, false, false}, []string{"y: y < 20", "steps: the episode's steps overlap 0..9", "since: recorded at or after 2026-12-03T00:00:00Z"}},
		{`life:all last:2 tower`, []bool{true, true, false}, []string{"life: every life", "last: the most recent 2 of the matches", `word "tower", a whole word of summary, tags, action kind, note or events`}},
	}
	for _, tt := range tests {
		q, terms, err := ParseTerms(tt.query)
		if err != nil {
			t.Fatal(err)
		}
		if len(terms) != len(tt.match) {
			t.Fatalf("%s: %d terms, want %d", tt.query, len(terms), len(tt.match))
		}
		all := true
		for i, tm := range terms {
			if got := q.MatchTerm(tm, r); got != tt.match[i] {
				t.Errorf("%s: term %q matches %v, want %v", tt.query, tm.Text, got, tt.match[i])
			}
			all = all && tt.match[i]
			if tt.desc[i] != "" && q.Describe(tm) != tt.desc[i] {
				t.Errorf("%s: term %q reads %q, want %q", tt.query, tm.Text, q.Describe(tm), tt.desc[i])
			}
		}
		if q.Match(r) != all {
			t.Errorf("%s: Match %v, terms say %v", tt.query, q.Match(r), all)
		}
	}
}
