package episodespy

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want string // fmtOptions of the result, or "error: ..." for a usage error
	}{
		{nil, "radius=6"},
		{[]string{"--last", "5"}, "last=5 radius=6"},
		{[]string{"--la", "5"}, "last=5 radius=6"},
		{[]string{"--last=5"}, "last=5 radius=6"},
		{[]string{"--la=5"}, "last=5 radius=6"},
		{[]string{"--last", "-3"}, "last=-3 radius=6"},
		{[]string{"--last", " 7 "}, "last=7 radius=6"},
		{[]string{"--last", "1_000"}, "last=1000 radius=6"},
		{[]string{"--last", "5", "--last", "2"}, "last=2 radius=6"},
		{[]string{"--steps", "930", "989"}, "steps=930,989 radius=6"},
		{[]string{"--st", "1", "2"}, "steps=1,2 radius=6"},
		{[]string{"--near", "-3010", "-5569.5", "--radius", "8"}, "near=-3010,-5569.5 radius=8"},
		{[]string{"--near", "1e3", ".5", "--rad=inf"}, "near=1000,0.5 radius=+Inf"},
		{[]string{"--tag", "stuck", "--action", "go_to", "--grep", "bucket filled"}, "tag=stuck action=go_to grep=bucket filled radius=6"},
		{[]string{"--grep", "-x y"}, "grep=-x y radius=6"},
		{[]string{"--grep=--json"}, "grep=--json radius=6"},
		{[]string{"--p", "--j"}, "previous json radius=6"},
		{[]string{"--root", "previous/life_1"}, "root=previous/life_1 radius=6"},
		{[]string{"--q", "where?", "--sheet", "a.png"}, "sheet=a.png q=where? radius=6"},
		{[]string{"--then-now", "ep_000003", "--out", "x.png"}, "then_now=ep_000003 out=x.png radius=6"},
		{[]string{"-h"}, "help"},
		{[]string{"--he"}, "help"},
		{[]string{"--last", "5", "--help", "--bogus"}, "help"},
		// errors, in argparse's words
		{[]string{"--steps", "930", "989", "1037", "--json"}, "error: unrecognized arguments: 1037"},
		{[]string{"x", "--json", "y"}, "error: unrecognized arguments: x y"},
		{[]string{"--bogus"}, "error: unrecognized arguments: --bogus"},
		{[]string{"-l"}, "error: unrecognized arguments: -l"},
		{[]string{"--r", "3"}, "error: ambiguous option: --r could match --root, --radius"},
		{[]string{"--s", "1", "2"}, "error: ambiguous option: --s could match --steps, --same-screen, --sheet"},
		{[]string{"--t=x"}, "error: ambiguous option: --t could match --tag, --then-now"},
		{[]string{"--steps", "1"}, "error: argument --steps: expected 2 arguments"},
		{[]string{"--steps", "1", "--json"}, "error: argument --steps: expected 2 arguments"},
		{[]string{"--steps=1", "2"}, "error: argument --steps: expected 2 arguments"},
		{[]string{"--last"}, "error: argument --last: expected one argument"},
		{[]string{"--grep", "--json"}, "error: argument --grep: expected one argument"},
		{[]string{"--last", "x"}, "error: argument --last: invalid int value: 'x'"},
		{[]string{"--last", "2.5"}, "error: argument --last: invalid int value: '2.5'"},
		{[]string{"--near", "1", "it's"}, `error: argument --near: invalid float value: "it's"`},
		{[]string{"--json=1"}, "error: argument --json: ignored explicit argument '1'"},
		{[]string{"--last", "x", "--bogus"}, "error: argument --last: invalid int value: 'x'"},
	} {
		o, err := Parse(tc.argv)
		got := ""
		if err != nil {
			got = "error: " + err.Error()
		} else {
			got = fmtOptions(o)
		}
		if got != tc.want {
			t.Errorf("Parse(%q) = %q, want %q", tc.argv, got, tc.want)
		}
	}
}

func fmtOptions(o *Options) string {
	if o.Help {
		return "help"
	}
	var p []string
	add := func(k string, v *string) {
		if v != nil {
			p = append(p, k+"="+*v)
		}
	}
	if o.Root != "" {
		p = append(p, "root="+o.Root)
	}
	if o.Last != nil {
		p = append(p, "last="+itoa(*o.Last))
	}
	if o.Steps != nil {
		p = append(p, "steps="+itoa(o.Steps[0])+","+itoa(o.Steps[1]))
	}
	if o.Near != nil {
		p = append(p, "near="+gtoa(o.Near[0])+","+gtoa(o.Near[1]))
	}
	add("tag", o.Tag)
	add("action", o.Action)
	add("grep", o.Grep)
	if o.Previous {
		p = append(p, "previous")
	}
	add("same_screen", o.SameScreen)
	add("sheet", o.Sheet)
	if o.JSON {
		p = append(p, "json")
	}
	add("q", o.Q)
	add("then_now", o.ThenNow)
	add("out", o.Out)
	p = append(p, "radius="+gtoa(o.Radius))
	return strings.Join(p, " ")
}

// TestUsageMatchesRecorded: the usage text is the one the run recorded.
func TestUsageMatchesRecorded(t *testing.T) {
	want := "usage: episodes.py [-h] [--root ROOT] [--last LAST] [--steps A B] [--near X Z]\n" +
		"                   [--radius RADIUS] [--tag TAG] [--action ACTION]\n" +
		"                   [--grep GREP] [--previous] [--same-screen PNG]\n" +
		"                   [--sheet SHEET] [--json]\n"
	if Usage() != want {
		t.Fatalf("usage:\n%s\nwant:\n%s", Usage(), want)
	}
}

// writeStore makes a store from index rows and outcome notes.
func writeStore(t *testing.T, dir string, rows []string, notes map[string]string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "index.jsonl"), []byte(strings.Join(rows, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for id, n := range notes {
		d := filepath.Join(dir, "episodes", id)
		os.MkdirAll(filepath.Join(d, "state"), 0o755)
		os.WriteFile(filepath.Join(d, "outcome.json"), []byte(`{"notes": [`+n+`]}`), 0o644)
		os.WriteFile(filepath.Join(d, "action.json"), []byte(`{"call": "secret_word_`+id+`()"}`), 0o644)
	}
}

func row(id string, first, last int, x, z float64, tags, act string) string {
	tl := ""
	if tags != "" {
		tl = `"` + strings.Join(strings.Split(tags, ","), `", "`) + `"`
	}
	a := "null"
	if act != "" {
		a = `"` + act + `"`
	}
	return `{"action_kind": ` + a + `, "first_step": ` + itoa(first) + `, "id": "` + id + `", "image": "episodes/` + id + `/observation/image.png", "kind": "episode", "last_step": ` + itoa(last) + `, "path": "episodes/` + id + `", "summary": "s ` + id + `", "tags": [` + tl + `], "x": ` + ftoa(x) + `, "y": 64.0, "z": ` + ftoa(z) + `}`
}

// TestFilters checks every filter and its edges against a hand-made store.
func TestFilters(t *testing.T) {
	st := t.TempDir()
	writeStore(t, st, []string{
		row("ep_000000", 0, 0, 0, 0, "initial", ""),
		row("ep_000001", 0, 10, 3, 4, "stuck", "go_to"), // distance 5 from the origin
		row("ep_000002", 10, 20, 6, 8, "stuck,damage", "forward+jump"),
		row("ep_000003", 20, 30, 0.25, 0.35, "", "go_to"),
		`{"id": "ep_000004", "path": "episodes/ep_000004", "summary": "no position", "tags": [], "first_step": 30, "last_step": 31, "x": null, "z": null, "action_kind": "wait"}`,
	}, map[string]string{
		"ep_000001": `"  first   note\n with   spaces ", "second"`,
		"ep_000002": `"` + strings.Repeat("word ", 60) + `"`,
	})
	prev := filepath.Join(st, "previous", "life_1")
	writeStore(t, prev, []string{row("ep_000000", 0, 0, 100, 100, "initial", ""), row("ep_000001", 0, 5, 100, 101, "death", "go_to")}, map[string]string{"ep_000001": `"died here"`})
	run := func(args ...string) (string, string, int) {
		var o, e bytes.Buffer
		code := Main(context.Background(), args, Env{Store: st, Cwd: t.TempDir(), Stdout: &o, Stderr: &e})
		return o.String(), e.String(), code
	}
	ids := func(args ...string) string {
		out, _, code := run(append(args, "--json")...)
		if code != 0 {
			return "exit " + itoa(code)
		}
		var s []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if i := strings.Index(l, `"id": "`); i >= 0 {
				s = append(s, l[i+7:i+16])
			}
		}
		return strings.Join(s, " ")
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{}, "ep_000000 ep_000001 ep_000002 ep_000003 ep_000004"},
		{[]string{"--steps", "10", "10"}, "ep_000001 ep_000002"},                    // touching both ends
		{[]string{"--steps", "25", "11"}, "ep_000002 ep_000003"},                    // reversed bounds
		{[]string{"--steps", "5", "40"}, "ep_000001 ep_000002 ep_000003 ep_000004"}, // overlapping several
		{[]string{"--steps", "100", "200"}, ""},
		{[]string{"--near", "0", "0", "--radius", "5"}, "ep_000000 ep_000001 ep_000003"}, // exactly on the boundary
		{[]string{"--near", "0", "0", "--radius", "4.999"}, "ep_000000 ep_000003"},
		{[]string{"--near", "0", "0"}, "ep_000000 ep_000001 ep_000003"}, // radius 6 by default; null positions never match
		{[]string{"--near", "6", "8", "--radius", "0"}, "ep_000002"},
		{[]string{"--tag", "stuck"}, "ep_000001 ep_000002"},
		{[]string{"--tag", "stuc"}, ""},
		{[]string{"--action", "go_to"}, "ep_000001 ep_000003"},
		{[]string{"--action", "forward+jump", "--tag", "damage"}, "ep_000002"},
		{[]string{"--grep", "SECRET_WORD_ep_000002"}, "ep_000002"}, // action.json, any case
		{[]string{"--grep", "no POSITION"}, "ep_000004"},           // the raw row
		{[]string{"--last", "2"}, "ep_000003 ep_000004"},
		{[]string{"--last", "99"}, "ep_000000 ep_000001 ep_000002 ep_000003 ep_000004"},
		{[]string{"--last", "0"}, ""},
		{[]string{"--tag", "stuck", "--last", "1"}, "ep_000002"}, // last applies after the other filters
		{[]string{"--previous"}, "ep_000000 ep_000001"},
		{[]string{"--previous", "--tag", "death"}, "ep_000001"},
		{[]string{"--root", "previous/life_1", "--near", "100", "100", "--radius", "1"}, "ep_000000 ep_000001"},
		{[]string{"--root", "previous/life_1", "--previous"}, ""},
	} {
		if got := ids(tc.args...); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.args, got, tc.want)
		}
	}

	out, errs, code := run("--steps", "0", "10")
	want := "ep_000000  steps 0-0  tags=initial pos=(0.0,0.0)  action=-  s ep_000000  -> episodes/ep_000000/\n" +
		"ep_000001  steps 0-10  tags=stuck pos=(3.0,4.0)  action=go_to  s ep_000001  note: first note with spaces  -> episodes/ep_000001/\n" +
		"ep_000002  steps 10-20  tags=stuck,damage pos=(6.0,8.0)  action=forward+jump  s ep_000002  note: " + strings.Repeat("word ", 44)[:217] + "...  -> episodes/ep_000002/\n"
	if out != want || errs != "" || code != 0 {
		t.Errorf("human lines:\n%s\nwant:\n%s\nstderr %q code %d", out, want, errs, code)
	}
	out, _, _ = run("--steps", "20", "30")
	// %.1f rounds the binary value half-even: 0.25 -> 0.2, 0.35 (0.34999...) -> 0.3; no tags print "-"
	if !strings.Contains(out, "tags=- pos=(0.2,0.3)") || !strings.Contains(out, "ep_000004  steps 30-31  tags=-  action=wait  no position  -> episodes/ep_000004/") {
		t.Errorf("formatting: %s", out)
	}
	out, _, _ = run("--json", "--action", "go_to", "--last", "2")
	if !strings.HasSuffix(strings.Split(out, "\n")[0], `"z": 4.0, "note": "first note with spaces"}`) {
		t.Errorf("json note: %s", out)
	}
	out, _, _ = run("--previous", "--tag", "death", "--json")
	if !strings.Contains(out, `"image": "previous/life_1/episodes/ep_000001/observation/image.png"`) || !strings.HasSuffix(out, `"z": 101.0, "life": 1, "note": "died here"}`+"\n") {
		t.Errorf("previous json: %s", out)
	}
	out, _, _ = run("--previous", "--tag", "death")
	if !strings.HasSuffix(out, "note: died here  -> previous/life_1/episodes/ep_000001/\n") {
		t.Errorf("previous line: %s", out)
	}
	// empty result vs error
	out, errs, code = run("--tag", "nothing")
	if out != "" || errs != "(no matching episodes)\n" || code != 0 {
		t.Errorf("empty: %q %q %d", out, errs, code)
	}
	_, errs, code = run("--tag")
	if code != 2 || !strings.HasSuffix(errs, "episodes.py: error: argument --tag: expected one argument\n") {
		t.Errorf("error: %q %d", errs, code)
	}
	_, errs, code = run("--q", "what?")
	if errs != "Q: what?\n" || code != 0 {
		t.Errorf("q: %q", errs)
	}
	_, errs, code = run("--same-screen", "x.png")
	if code != 2 || !strings.Contains(errs, "KiCad") {
		t.Errorf("same-screen: %q %d", errs, code)
	}
}

func TestSheetAndThenNow(t *testing.T) {
	st := t.TempDir()
	writeStore(t, st, []string{row("ep_000000", 0, 0, 1.5, 2.5, "initial", ""), row("ep_000001", 0, 9, 3, 4, "", "go_to")}, nil)
	cwd := t.TempDir()
	run := func(args ...string) (string, string, int) {
		var o, e bytes.Buffer
		code := Main(context.Background(), args, Env{Store: st, Cwd: cwd, Stdout: &o, Stderr: &e})
		return o.String(), e.String(), code
	}
	_, errs, code := run("--sheet", "s.png", "--q", "where was the tree?")
	if code != 0 || errs != "sheet: s.png  Q: where was the tree?\n" {
		t.Fatalf("sheet: %q %d", errs, code)
	}
	if b, err := os.ReadFile(filepath.Join(cwd, "s.png")); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Fatalf("sheet not a PNG: %v", err)
	}
	_, errs, _ = run("--sheet", "none.png", "--tag", "nothing")
	if errs != "(no matching episodes)\n" {
		t.Errorf("empty sheet: %q", errs)
	}
	if _, err := os.Stat(filepath.Join(cwd, "none.png")); err == nil {
		t.Errorf("an empty result wrote a sheet")
	}
	out, _, code := run("--then-now", "ep_000000", "--out", "tn.png", "--q", "same tree?")
	if code != 0 || out != "wrote tn.png: THEN ep_000000 step 0 at (2,2) | NOW. Q: same tree?. View it with view_image.\n" {
		t.Errorf("then-now: %q %d", out, code)
	}
	_, errs, code = run("--then-now", "ep_999999")
	if code != 1 || errs != "no frame for 'ep_999999': not an episode id in the index and not a file\n" {
		t.Errorf("then-now missing: %q %d", errs, code)
	}
}

func itoa(n int) string     { return strconvItoa(n) }
func ftoa(f float64) string { return strconvF(f) }
