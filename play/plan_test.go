package play

import (
	"strings"
	"testing"
)

func TestParsePlan(t *testing.T) {
	cases := []struct {
		src  string
		want []string // Entry.String of each
		err  string
	}{
		{src: "go_to x=-70 z=189; mine_ahead; collect_drops item=tree", want: []string{"go_to(x=-70,z=189)", "mine_ahead()", "collect_drops(item=tree)"}},
		{src: "go_to x=1.5 z=2\nlook_abs yaw=90 pitch=-10\n# a comment\n", want: []string{"go_to(x=1.5,z=2)", "look_abs(yaw=90,pitch=-10)"}},
		{src: `say text="hello; world" loud=true`, want: []string{`say(text="hello; world",loud=true)`}},
		{src: `{"forward":1,"jump":1} x20; mine_ahead`, want: []string{`{"forward":1,"jump":1} x20`, "mine_ahead()"}},
		{src: "go_to(x=1, z=2); dig_down(n=3)", want: []string{"go_to(x=1,z=2)", "dig_down(n=3)"}},
		{src: `{"actions": [{"procedure": "go_to", "args": {"x": -70, "z": 189}}, {"action": {"attack": 1}, "repeat": 24}, {"atom": "mine_ahead", "why": "the trunk is ahead"}]}`,
			want: []string{"go_to(x=-70,z=189)", `{"attack":1} x24`, "mine_ahead()"}},
		{src: `[{"procedure": "wait"}]`, want: []string{"wait()"}},
		{src: "", err: "empty plan"},
		{src: " ; ;", err: "no entries"},
		{src: "go_to x", err: "want key=value"},
		{src: "go_to =3", err: "want key=value"},
		{src: "../etc x=1", err: "not an atom or procedure name"},
		{src: `go_to x="1`, err: "unclosed quote"},
		{src: `{"forward":1} x0`, err: "xN"},
		{src: `{"forward":1} times 3`, err: "xN"},
		{src: `{"plan": []}`, err: `no "actions"`},
		{src: `{"actions": [{"procedure": "a", "action": {"x": 1}}]}`, err: "not both"},
		{src: `{"actions": [{"action": {"forward": 1}, "repeat": 0}]}`, err: "at least 1"},
		{src: `{"actions": [{"procedure": "a", "args": {"x": [1]}}]}`, err: "want a number, string or bool"},
		{src: `{"actions": [{"procedure": "a", "bogus": 1}]}`, err: `unknown field "bogus"`},
		{src: `{"actions": [{}]}`, err: `no "procedure", "atom" or "action"`},
		{src: strings.Repeat("wait; ", MaxPlanEntries+1), err: "more than"},
	}
	for _, c := range cases {
		got, err := ParsePlan(c.src)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want one containing %q", c.src, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.src, err)
			continue
		}
		var s []string
		for _, e := range got {
			s = append(s, e.String())
		}
		if strings.Join(s, " | ") != strings.Join(c.want, " | ") {
			t.Errorf("%q:\n got %v\nwant %v", c.src, s, c.want)
		}
	}
}

// TestPlanRoundTrip: an entry printed in the log's form parses back to
// the same entry.
func TestPlanRoundTrip(t *testing.T) {
	src := `go_to x=-70.5 z=189 within=2; craft item=pick_wood n=1; say text="a b"; {"forward":1} x5`
	es, err := ParsePlan(src)
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, e := range es {
		parts = append(parts, e.String())
	}
	again, err := ParsePlan(strings.Join(parts, "; "))
	if err != nil {
		t.Fatalf("%v: %v", parts, err)
	}
	for i := range es {
		if again[i].String() != es[i].String() {
			t.Errorf("entry %d: %s, then %s", i, es[i], again[i])
		}
	}
}

func FuzzParsePlan(f *testing.F) {
	for _, s := range []string{
		"go_to x=-70 z=189; mine_ahead; collect_drops item=tree",
		`{"forward":1,"jump":1} x20`,
		`{"actions": [{"procedure": "go_to", "args": {"x": -70, "z": 189}}, {"action": {"attack": 1}, "repeat": 24}]}`,
		`say text="a;b" n=3`,
		"go_to(x=1, z=2)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		es, err := ParsePlan(src)
		if err != nil {
			return
		}
		if len(es) == 0 || len(es) > MaxPlanEntries {
			t.Fatalf("%q: %d entries", src, len(es))
		}
		for _, e := range es {
			if e.IsRaw() && (e.Repeat < 1 || e.Action == nil) {
				t.Fatalf("%q: raw entry %+v", src, e)
			}
			_ = e.String()
		}
	})
}
