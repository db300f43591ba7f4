package query

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// FuzzParse checks that Parse never panics, that every failure is a
// *Error naming a term of the input, and that a parsed query matches a
// row without panicking.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"tree", `"nearest tree" tag:stuck`, "steps:1..2 near:1,2,3 r:4 y:<5 life:all last:3",
		"since:2026-12-02 until:2026-12-03T00:00:00Z", "in:mine bucket", "-tag:x action:go_to",
		"y:-1..1", "near:1e308,-1e308 r:1e308", `"`, "steps:9..3", "colour:red",
		"near:1,3,2 r:1 tag:a", "action:go_to action:look s", "event:hurt -tag:b until:2027-01-01",
	} {
		f.Add(s)
	}
	r := row(&testing.T{}, `{"id":"ep_000001","first_step":1,"last_step":2,"action_kind":"go_to","summary":"s","tags":["a"],"x":1,"y":2,"z":3,"time":"2026-12-02T00:00:00Z"}`)
	f.Fuzz(func(t *testing.T, s string) {
		q, err := Parse(s)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q): error %v is not a *Error", s, err)
			}
			if pe.Term != "" && !strings.Contains(s, strings.Trim(pe.Term, `"`)) {
				t.Fatalf("Parse(%q): bad term %q is not in the input", s, pe.Term)
			}
			return
		}
		got := q.Match(r)
		if q.Near != nil && q.Near.R < 0 {
			t.Fatalf("negative radius from %q", s)
		}
		// The terms, rejoined, are the same query, and a row matches
		// the query exactly when it matches each term (explain's stages).
		q2, terms, err := ParseTerms(s)
		if err != nil {
			t.Fatalf("ParseTerms(%q): %v after Parse accepted it", s, err)
		}
		texts := make([]string, len(terms))
		each := true
		for i, tm := range terms {
			texts[i] = tm.Text
			if !q2.InMine && !q2.MatchTerm(tm, r) {
				each = false
			}
			_ = q2.Describe(tm)
		}
		if q3, err := Parse(strings.Join(texts, " ")); err != nil || !reflect.DeepEqual(q3, q) {
			t.Fatalf("the terms of %q rejoined (%q) parse to %+v, %v; want %+v", s, texts, q3, err, q)
		}
		if !q.InMine && each != got {
			t.Fatalf("%q: Match is %v but every term matches is %v", s, got, each)
		}
	})
}
