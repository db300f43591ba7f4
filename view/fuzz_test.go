package view

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mfm-project/mfm/episodes"
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

// FuzzMapRows: any grid.jsonl / index.jsonl content parses row by row
// without panicking and lays out and renders (text and image) within its
// bounds. Seeds are in testdata/fuzz/FuzzMapRows/.
func FuzzMapRows(f *testing.F) {
	f.Add([]byte(handGrid+handIndex), uint8(0))
	f.Add([]byte(`{"cell": [1e300, -1e300, 5], "kind": "walked"}`+"\n"+`{"id": "x", "x": -0.0, "z": 1e9}`), uint8(3))
	lim := DefaultLimits()
	f.Fuzz(func(t *testing.T, data []byte, flags uint8) {
		var cells []gridCell
		var pos []posRow
		for _, l := range bytes.Split(data, []byte("\n")) {
			if c, ok := parseGridCell(l); ok {
				cells = append(cells, c)
			}
			if p, ok := parsePosRow(l); ok {
				pos = append(pos, p)
			}
		}
		o := MapOps{X: int(flags%7) - 3, Z: int(flags/7%5) - 2, NorthPlusZ: flags&0x40 != 0}
		if flags&0x80 != 0 {
			o.YBand, o.YMin, o.YMax = true, -1, 1
		}
		r := 1 + int(flags%4)
		ax := episodes.Axes{}
		if flags&0x20 != 0 {
			ax = episodes.LuantiAxes
		}
		m := newMapModel(o, ax, r, o.X, o.Z, "fuzz", cells, pos)
		txt := m.text()
		if got := bytes.Count(txt, []byte("\n")); got < 2*r+1 {
			t.Fatalf("text map has %d lines for r=%d", got, r)
		}
		img, err := m.image(2, &lim)
		if err != nil {
			t.Fatal(err)
		}
		if img.Rect.Dx() > lim.MaxOutSide || img.Rect.Dy() > lim.MaxOutSide {
			t.Fatalf("image %v", img.Rect)
		}
	})
}
