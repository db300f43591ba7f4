package consolidate

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Two runs of harvest_tree that gained 4 and then 6 logs verify as
// "inv_ge log 4" and "inv_ge log 6": one skill, support counted twice.
func TestMergeInvGeCounts(t *testing.T) {
	fb := func(id string, call string, logs int, fail string) Feedback {
		f := Feedback{Life: 1, Episode: id, Call: call, InvDelta: map[string]int{}, Failure: fail, Success: fail == ""}
		if logs > 0 {
			f.InvDelta["log"] = logs
			f.Verified = true
		}
		return f
	}
	feed := []Feedback{
		fb("ep_000001", "harvest_tree", 2, ""), fb("ep_000002", "harvest_tree", 2, ""),
		fb("ep_000003", "go_to", 0, FailNavStuck),
		fb("ep_000004", "harvest_tree", 3, ""), fb("ep_000005", "harvest_tree", 3, ""),
	}
	cfg := DefaultConfig()
	cands := Induce(feed, cfg)
	var skills []Candidate
	for _, c := range cands {
		if c.Kind == KindSkill {
			skills = append(skills, c)
		}
	}
	if len(skills) != 2 || skills[0].Verify != "inv_ge log 4" || skills[1].Verify != "inv_ge log 6" || skills[0].ID != skills[1].ID {
		t.Fatalf("induced skills %+v", skills)
	}
	acc, rej := Curate(skills, map[string]bool{"harvest_tree": true})
	if len(acc) != 1 || len(rej) != 0 {
		t.Fatalf("accepted %d, rejected %d (%+v): want the two merged", len(acc), len(rej), rej)
	}
	m := acc[0]
	// Confidence: both 2/3; merged, 4 supporting episodes: 4/5.
	if m.SupportCount != 2 || len(m.Support) != 4 || m.Verify != "inv_ge log 4" || m.Confidence != 0.8 {
		t.Errorf("merged %+v: want support_count 2, 4 episodes, inv_ge log 4, confidence 0.8", m)
	}
	if len(m.Usage) != 1 || !strings.Contains(m.Usage[0], "(inv_ge log 6)") {
		t.Errorf("usage %q", m.Usage)
	}
	// The other order keeps the smaller count too.
	acc, _ = Curate([]Candidate{skills[1], skills[0]}, map[string]bool{"harvest_tree": true})
	if len(acc) != 1 || acc[0].Verify != "inv_ge log 4" {
		t.Errorf("reversed: %+v", acc)
	}
	// A different item is not a duplicate.
	other := skills[1]
	other.Verify = "inv_ge stick 6"
	other.setID()
	if acc, _ := Curate([]Candidate{skills[0], other}, map[string]bool{"harvest_tree": true}); len(acc) != 2 {
		t.Errorf("inv_ge log / inv_ge stick merged: %+v", acc)
	}
}

func TestKnapsack(t *testing.T) {
	for _, c := range []struct {
		w    []int
		v    []float64
		W    int
		want []int
	}{
		// By relevance per token item 0 comes first (0.018 > 0.015) and then
		// nothing else fits in 80: 0.9. Items 1 and 2 give 1.2.
		{[]int{50, 40, 40}, []float64{0.9, 0.6, 0.6}, 80, []int{1, 2}},
		{[]int{50, 40, 40}, []float64{0.9, 0.6, 0.6}, 90, []int{0, 1}}, // 1.5
		{[]int{50, 40, 40}, []float64{0.9, 0.6, 0.6}, 130, []int{0, 1, 2}},
		{[]int{50, 40, 40}, []float64{0.9, 0.6, 0.6}, 39, nil},
		{[]int{50, 40, 40}, []float64{0.9, 0.6, 0.6}, 49, []int{1}}, // first of equals
		// The textbook case: 60/10, 100/20, 120/30 in 50 → 220 (greedy: 160).
		{[]int{10, 20, 30}, []float64{60, 100, 120}, 50, []int{1, 2}},
		{nil, nil, 100, nil},
	} {
		if got := Knapsack(c.w, c.v, c.W); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Knapsack(%v, %v, %d) = %v, want %v", c.w, c.v, c.W, got, c.want)
		}
	}
}

func TestRetrieveRelevance(t *testing.T) {
	mk := func(name string, conf float64, scope string, trig ...string) Candidate {
		c := Candidate{Kind: KindRemedy, Name: name, Trigger: map[string]string{}, Confidence: conf, Scope: scope, Status: StatusAccepted,
			FailureType: FailNavStuck, Repair: []string{"mine_ahead"}, Support: []Ref{{1, "ep_000001", false}}, SupportCount: 1}
		for i := 0; i < len(trig); i += 2 {
			c.Trigger[trig[i]] = trig[i+1]
		}
		c.setID()
		return c
	}
	ctx, err := ParseContext("failure=NAV_STUCK,call=go_to")
	if err != nil {
		t.Fatal(err)
	}
	a := mk("a", 0.9, strings.Repeat("long scope ", 60), "call", "go_to", "failure", "NAV_STUCK")
	b := mk("b", 0.6, "", "call", "go_to")
	c := mk("c", 0.8, "", "call", "go_to", "item", "log")
	d := mk("d", 0.99, "", "call", "dig_down")
	e := mk("e", 0.99, "", "call", "GO_TO", "failure", "DAMAGE")
	for _, x := range []struct {
		c    Candidate
		want float64
	}{{a, 0.9}, {b, 0.6}, {c, 0.4}, {d, 0}, {e, 0}} { // c: 1 of 2 fields × 0.8
		if got := Relevance(x.c, ctx); fmt.Sprintf("%.6f", got) != fmt.Sprintf("%.6f", x.want) {
			t.Errorf("relevance of %s = %v, want %v", x.c.Name, got, x.want)
		}
	}
	ta, tb, tc := Tokens(a), Tokens(b), Tokens(c)
	if ta < tb+tc {
		t.Fatalf("tokens a %d, b %d, c %d: want a ≥ b+c", ta, tb, tc)
	}
	names := func(cs []Candidate) string {
		var n []string
		for _, c := range cs {
			n = append(n, c.Name)
		}
		return strings.Join(n, " ")
	}
	all := []Candidate{a, b, c, d, e}
	for _, x := range []struct {
		budget int
		want   string
	}{
		{ta, "b c"},          // 0.6+0.4 = 1.0 beats a's 0.9; b (0.6/tb) before c (0.4/tc)
		{ta + tb - 1, "b c"}, // a+b does not fit
		{ta + tb, "b a"},     // 1.5: b's 0.6/tb before a's 0.9/ta
		{ta + tb + tc, "b c a"},
		{tb, "b"},
		{min(tb, tc) - 1, ""},
	} {
		ctx.Budget = x.budget
		if got := names(Retrieve(all, ctx)); got != x.want {
			t.Errorf("budget %d (a %d, b %d, c %d tokens): %q, want %q", x.budget, ta, tb, tc, got, x.want)
		}
	}
}

// Retrievals through the tree and the CLI path are kept in usage.jsonl and
// shown on the entries.
func TestUsageHistory(t *testing.T) {
	s := constructed(t)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tr := &Tree{Store: s, Config: DefaultConfig(), Now: func() time.Time { return now }}
	read := func(p string) string {
		b, _, err := tr.Open(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	const q = "retrieve/call=go_to,failure=NAV_STUCK"
	if got := read(q); !strings.Contains(got, "remedy nav_stuck_after_go_to") {
		t.Fatalf("retrieval %q", got)
	}
	read(q) // the same cat's second read: not a new retrieval
	now = now.Add(UsageWindow + time.Second)
	read(q)
	ctx, _ := ParseContext("item=log")
	res, err := Compute(s, DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := LogUsage(s, ctx, Retrieve(res.Accepted, ctx), "cli", now); err != nil {
		t.Fatal(err)
	}
	recs, err := ReadUsage(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || recs[0].Context != "call=go_to,failure=NAV_STUCK,budget=400" || recs[2].Via != "cli" || recs[2].Context != "item=log,budget=400" {
		t.Fatalf("usage records %+v", recs)
	}
	if u := read("usage.jsonl"); strings.Count(u, "\n") != 3 {
		t.Errorf("usage.jsonl %q", u)
	}
	res, err = Compute(s, DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, c := range res.Accepted {
		got[c.Name] = c.Retrieved
		if c.Name == "nav_stuck_after_go_to" {
			md := Markdown(c)
			if !strings.Contains(md, "retrieved 2 time(s); retrieved 2026-01-02T03:04:05Z for call=go_to,failure=NAV_STUCK,budget=400 (mount); retrieved 2026-01-02T03:04:16Z") {
				t.Errorf("markdown lacks the usage history:\n%s", md)
			}
		}
	}
	if got["nav_stuck_after_go_to"] != 2 || got["get_log"] != 1 {
		t.Errorf("retrieved counts %v", got)
	}
	// A torn last line is skipped.
	f, _ := os.OpenFile(s.Path(UsageFile), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"time": "x", "ids": ["remedy`)
	f.Close()
	if recs, err := ReadUsage(s); err != nil || len(recs) != 3 {
		t.Errorf("torn tail: %d records, %v", len(recs), err)
	}
}

// seq builds feedback for life 1 from a compact spec: each element is
// "call:kind" with kind ok (a state change), v (a verified gain), stuck
// (NAV_STUCK) or none (NO_EFFECT); episode ids count from ep_000001.
func seq(spec ...string) []Feedback {
	var fb []Feedback
	for i, s := range spec {
		call, kind, _ := strings.Cut(s, ":")
		f := Feedback{Life: 1, Episode: fmt.Sprintf("ep_%06d", i+1), Call: call, InvDelta: map[string]int{}, Changed: []string{}}
		switch kind {
		case "ok":
			f.Success, f.Changed = true, []string{ChangePosition}
		case "v":
			f.Success, f.Verified, f.Changed, f.InvDelta["log"] = true, true, []string{ChangeInventory}, 1
		case "stuck":
			f.Failure, f.Stagnant = FailNavStuck, true
		case "none":
			f.Failure, f.Stagnant = FailNoEffect, true
		}
		fb = append(fb, f)
	}
	return fb
}

func remedies(cs []Candidate) []Candidate {
	var out []Candidate
	for _, c := range cs {
		if c.Kind == KindRemedy {
			out = append(out, c)
		}
	}
	return out
}

// A remedy is kept only when its repair is specific to the failure: it
// follows the failure more often than the call's successes and at least
// MinLift times as often as any episode. Numbers worked by hand.
func TestRemedyEvidence(t *testing.T) {
	cfg := DefaultConfig()
	h := func(n int) []string {
		var s []string
		for i := 0; i < n; i++ {
			s = append(s, "harvest_tree:v")
		}
		return s
	}
	spec := []string{"go_to:ok"}                                   // 1
	spec = append(spec, h(5)...)                                   // 2-6
	spec = append(spec, "go_to:stuck", "pillar_up:ok", "go_to:ok") // 7-9
	spec = append(spec, h(5)...)                                   // 10-14
	spec = append(spec, "go_to:ok")                                // 15
	spec = append(spec, h(5)...)                                   // 16-20
	spec = append(spec, "go_to:stuck", "go_to:ok")                 // 21-22
	spec = append(spec, h(5)...)                                   // 23-27
	fb := seq(spec...)
	known := map[string]bool{"go_to": true, "pillar_up": true, "harvest_tree": true}
	rs := remedies(Induce(fb, cfg))
	if len(rs) != 2 {
		t.Fatalf("%d remedies, want 2: %+v", len(rs), rs)
	}
	// ep 7: go_to came back in ep 9 after pillar_up.
	r := rs[0]
	if strings.Join(r.Repair, " ") != "pillar_up go_to" || r.Scope != "when go_to ends in NAV_STUCK, then go_to again" ||
		len(r.Support) != 3 || r.Support[1].ID != "ep_000008" || r.Support[2].ID != "ep_000009" {
		t.Errorf("remedy %+v", r)
	}
	// pillar_up (ep 8) follows the stuck ep 7 but not ep 21: 1 of 2; no
	// successful go_to (1, 9, 15, 22); episodes 3-7 of all 27; go_to is
	// stuck in 2 of its 6 episodes.
	want := Evidence{Call: "pillar_up", AfterFailure: [2]int{1, 2}, AfterSuccess: [2]int{0, 4}, AfterAny: [2]int{5, 27}, CallFailing: [2]int{2, 6}}
	if r.Evidence == nil || *r.Evidence != want || r.Confidence != 0.5 { // (1+1)/(2+2)
		t.Errorf("evidence %+v confidence %v, want %+v and 0.5", r.Evidence, r.Confidence, want)
	}
	// ep 21: go_to worked on the next try: nothing to repair.
	if len(rs[1].Repair) != 0 || !strings.Contains(rs[1].Scope, "go_to succeeded again in ep_000022 with nothing done in between") {
		t.Errorf("remedy %+v", rs[1])
	}
	acc, rej := Curate(rs, known)
	if len(acc) != 1 || acc[0].ID != r.ID || len(rej) != 1 || !strings.Contains(rej[0].Reason, "no repair action") {
		t.Errorf("accepted %v, rejected %v", names(acc), reasons(rej))
	}

	// look_at then mine_ahead is the plan, whether or not the look_at
	// turned the camera: no remedy for the NO_EFFECT look_at.
	fb = seq("look_at:ok", "mine_ahead:v", "look_at:ok", "mine_ahead:v", "look_at:none", "mine_ahead:v", "look_at:ok", "mine_ahead:v")
	rs = remedies(Induce(fb, cfg))
	if len(rs) != 1 || strings.Join(rs[0].Repair, " ") != "mine_ahead look_at" {
		t.Fatalf("remedies %+v", rs)
	}
	_, rej = Curate(rs, map[string]bool{"look_at": true, "mine_ahead": true})
	if len(rej) != 1 || rej[0].Reason != "not specific: mine_ahead follows look_at as often when it succeeds (3 of 3) as after NO_EFFECT (1 of 1)" {
		t.Errorf("rejected %v", reasons(rej))
	}

	// A call that has no effect in 3 of its 4 episodes (a wait): its no
	// effect is not a failure, whatever follows it.
	fb = seq("watch:none", "go_to:ok", "dig:v", "dig:v", "dig:v", "dig:v", "dig:v", "watch:none", "go_to:ok", "dig:v", "dig:v", "dig:v", "dig:v", "dig:v",
		"watch:ok", "dig:v", "dig:v", "dig:v", "dig:v", "dig:v", "watch:none", "go_to:ok")
	rs = remedies(Induce(fb, cfg))
	acc, rej = Curate(rs, map[string]bool{"dig": true, "watch": true, "go_to": true})
	if len(acc) != 0 || len(rej) != 2 || rej[0].Reason != "not a failure to repair: watch has no effect in 3 of its 4 episodes, so no effect is its usual outcome (as for a wait or a look-around) and tells nothing about what went wrong" ||
		!strings.Contains(rej[1].Reason, "no repair action") { // the last watch: nothing after it
		t.Errorf("accepted %v, rejected %v", names(acc), reasons(rej))
	}

	// A repair that follows everything: wait after each of 10 episodes,
	// and after the failure: 1 of 1 against 9 of 10 — less than 2×.
	fb = seq("dig:v", "wait:ok", "dig:v", "wait:ok", "dig:v", "wait:ok", "use:none", "wait:v", "dig:v", "wait:ok")
	rs = remedies(Induce(fb, cfg))
	if len(rs) != 1 {
		t.Fatalf("remedies %+v", rs)
	}
	_, rej = Curate(rs, map[string]bool{"dig": true, "wait": true, "use": true})
	if len(rej) != 1 || !strings.Contains(rej[0].Reason, "not specific: wait follows NO_EFFECT use in 1 of 1, less than 2× as often as it follows any episode (9 of 10)") {
		t.Errorf("rejected %v", reasons(rej))
	}
}
