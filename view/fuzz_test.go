package view

import (
	"strings"
	"testing"
)

// FuzzParse: Parse never panics; whatever it accepts is its own canonical
// spelling, and every name parseLenient understands has a canonical
// spelling that parses back to the same Spec (parse(canon(x)) == x).
// Seeds are in testdata/fuzz/FuzzParse/ and run with every go test.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"episodes/ep_000001/observation/image@crop=1,2,3,4@zoom=4@grid.png",
		"map/at=-3,4@r=8@y=-2..5@cell=4@north=+z.png",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rel string) {
		s, ok, err := Parse(rel)
		if !ok {
			return
		}
		if err == nil {
			if c := s.Canonical(); c != rel {
				t.Fatalf("Parse(%q) accepted a name whose canonical spelling is %q", rel, c)
			}
		} else if !strings.HasPrefix(err.Error(), "view ") {
			t.Fatalf("Parse(%q): error without the view name: %v", rel, err)
		}
		ls, lok, lerr := parseLenient(rel)
		if !lok || lerr != nil {
			return
		}
		c := ls.Canonical()
		s2, ok2, err2 := Parse(c)
		if !ok2 && ls.Kind == FrameView && ls.Frame == (FrameOps{}) {
			return // no operation left (image@zoom=1.png): the canonical name is the frame itself
		}
		if !ok2 || err2 != nil {
			t.Fatalf("canonical %q of %q does not parse: ok=%v err=%v", c, rel, ok2, err2)
		}
		if s2 != ls {
			t.Fatalf("round trip of %q via %q:\n got %+v\nwant %+v", rel, c, s2, ls)
		}
	})
}
