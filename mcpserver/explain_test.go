package mcpserver

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/mfm-project/mfm/consolidate"
	"github.com/mfm-project/mfm/index"
)

// TestQueryExplain: the query tool's explain=true and a read of
// q/<query>/explain give the mount's explanation (index.Explain), with
// in:mine answered from mine/; explain is refused with episodes_py.
func TestQueryExplain(t *testing.T) {
	cs, s := newTestServer(t, nil)
	if err := os.WriteFile(s.Path("mine", "notes.md"), []byte("- a fall off the tower: ep_000044\n- the pit: steps 214-258\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"near:-69,185,22", "in:mine fall", "in:mine"} {
		want, err := index.Explain(context.Background(), s, q, (&consolidate.Resolver{Store: s}).InMine())
		if err != nil {
			t.Fatal(err)
		}
		res := call(t, cs, ToolQuery, map[string]any{"query": q, "explain": true})
		var out QueryOutput
		structured(t, res, &out)
		if res.IsError || out.Explain != string(want) || !strings.Contains(texts(res), string(want)) {
			t.Errorf("query %q explain=true: %q\n%s\nwant the explanation %q", q, out.Explain, texts(res), want)
		}
		res = call(t, cs, ToolRead, map[string]any{"path": "q/" + q + "/explain"})
		if res.IsError || texts(res) != string(want) {
			t.Errorf("read q/%s/explain: %q, want %q", q, texts(res), want)
		}
	}
	for q, has := range map[string]string{
		"near:-69,185,22": "written near:-69,22,185 (y second) it would keep 17",
		"in:mine fall":    "in:mine → 1 ",
		"in:mine":         "in:mine → 2 ",
	} {
		res := call(t, cs, ToolQuery, map[string]any{"query": q, "explain": true})
		if !strings.Contains(texts(res), has) {
			t.Errorf("query %q explain=true lacks %q:\n%s", q, has, texts(res))
		}
	}
	res := call(t, cs, ToolRead, map[string]any{"path": "q/tag:damage"})
	if !strings.Contains(texts(res), "explain") {
		t.Errorf("q/tag:damage does not list explain: %s", texts(res))
	}
	res = call(t, cs, ToolQuery, map[string]any{"episodes_py": []string{"--last", "1"}, "explain": true})
	if !res.IsError || !strings.Contains(texts(res), "explain is for the cue language") {
		t.Errorf("explain with episodes_py: %v %s", res.IsError, texts(res))
	}
	res = call(t, cs, ToolQuery, map[string]any{"query": "near:1", "explain": true})
	if !res.IsError {
		t.Errorf("a malformed query explained: %s", texts(res))
	}
}

// TestCheckIsTheMountsCheck: the check tool's text and a read of
// mine/.check are consolidate.Check's report, the mount's mine/.check,
// step ranges included; path narrows it to a file.
func TestCheckIsTheMountsCheck(t *testing.T) {
	cs, s := newTestServer(t, nil)
	notes := "- fell: ep_000044, and the pit: steps 214-258\n- made up: ep_000999 at step 5000\n"
	if err := os.WriteFile(s.Path("mine", "notes.md"), []byte(notes), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.Path("mine", "other.md"), []byte("- far: steps 9000-9100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := consolidate.Check(s, &consolidate.Resolver{Store: s})
	if err != nil {
		t.Fatal(err)
	}
	want := string(rep.Text())
	for _, w := range []string{`mine/notes.md:2: "ep_000999"`, `mine/notes.md:2: "step 5000"`, `mine/other.md:1: "steps 9000-9100"`, "5 citation(s), 3 to missing episodes"} {
		if !strings.Contains(want, w) {
			t.Fatalf("the report lacks %q:\n%s", w, want)
		}
	}
	res := call(t, cs, ToolCheck, nil)
	var out CheckOutput
	structured(t, res, &out)
	if res.IsError || texts(res) != want || out.Citations != 5 || out.Resolved != 2 || len(out.Missing) != 3 {
		t.Errorf("check: %+v\n%s\nwant the report\n%s", out, texts(res), want)
	}
	res = call(t, cs, ToolRead, map[string]any{"path": "mine/.check"})
	if res.IsError || texts(res) != want {
		t.Errorf("read mine/.check: %q, want %q", texts(res), want)
	}
	res = call(t, cs, ToolCheck, map[string]any{"path": "mine/other.md"})
	structured(t, res, &out)
	if out.Citations != 1 || len(out.Missing) != 1 || out.Missing[0].Text != "steps 9000-9100" || !strings.HasSuffix(texts(res), "1 citation(s), 1 to missing episodes; 0 procedure(s) without a description\n") {
		t.Errorf("check mine/other.md: %+v %s", out, texts(res))
	}
}
