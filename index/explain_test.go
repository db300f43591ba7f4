package index

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mfm-project/mfm/index/query"
)

// explainCounts are the "TERM → N" lines of an explanation, in order.
var explainLine = regexp.MustCompile(`(?m)^(\S.*?) → (\d+)  `)

func explainCounts(t *testing.T, b []byte) [][2]string {
	t.Helper()
	var out [][2]string
	for _, m := range explainLine.FindAllStringSubmatch(string(b), -1) {
		out = append(out, [2]string{m[1], m[2]})
	}
	return out
}

// TestExplain checks hand-worked stage counts on the small store, the
// readings of the terms and the hints a zero gets.
func TestExplain(t *testing.T) {
	s := testStore(t)
	cites := func(ctx context.Context) ([]Cite, error) {
		return []Cite{{Dir: "episodes/ep_000001", File: "mine/notes.md", Line: "the cave is at ep_000001, dug from the surface"}}, nil
	}
	tests := []struct {
		query string
		want  [][2]string // the TERM → N lines
		has   []string    // text the explanation must hold
	}{
		{"tag:broke dug last:1", [][2]string{{"start", "7"}, {"(no life: term)", "5"}, {"tag:broke", "2"}, {"dug", "2"}, {"last:1", "1"}},
			[]string{`tag: has the tag "broke"`, `word "dug"`, "count: 1\n"}},
		{"life:1 go_to", [][2]string{{"start", "7"}, {"life:1", "2"}, {"go_to", "1"}}, []string{"life: life 1 only", "count: 1\n"}},
		{"near:3,1,4 r:1", [][2]string{{"start", "7"}, {"(no life: term)", "5"}, {"near:3,1,4", "0"}, {"r:1", "0"}},
			[]string{"near: x=3 y=1 z=4 r=1, 3D distance", "the nearest of the 5 before it: ep_000001, 5.0 away, at x=3.0 y=4.0 z=0.0",
				"written near:3,4,1 (y second) it would keep 1", "count: 0\n"}},
		{"tag:nosuch", [][2]string{{"start", "7"}, {"(no life: term)", "5"}, {"tag:nosuch", "0"}}, []string{"tags of the ones before it: broke 2, initial 1, note 1, stuck 1"}},
		{"y:>100", nil, []string{"the 5 before it have y from -10.0 to 20.0"}},
		{"in:mine cave", [][2]string{{"start", "7"}, {"(no life: term)", "5"}, {"cave", "5"}, {"in:mine", "1"}}, []string{"the citing paragraph or list item in mine/",
			"cave → 5  (with in:mine, words match your notes: applied at in:mine below;", `holding all the words, here the words "cave";`}},
		{"in:mine river", [][2]string{{"start", "7"}, {"(no life: term)", "5"}, {"river", "5"}, {"in:mine", "0"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			b, err := Explain(context.Background(), s, tt.query, cites)
			if err != nil {
				t.Fatal(err)
			}
			if tt.want != nil {
				if got := explainCounts(t, b); fmt.Sprint(got) != fmt.Sprint(tt.want) {
					t.Errorf("stages %v, want %v\n%s", got, tt.want, b)
				}
			}
			for _, h := range tt.has {
				if !strings.Contains(string(b), h) {
					t.Errorf("lacks %q:\n%s", h, b)
				}
			}
		})
	}
	if _, err := Explain(context.Background(), s, "near:1", cites); err == nil || !strings.Contains(err.Error(), "near:") {
		t.Errorf("a malformed query: %v", err)
	}
	// Another agent's rows are not in this store: refused, not counted as
	// if the query were over this agent's own rows.
	for _, q := range []string{"agent:alice tag:broke", "agent:all"} {
		if _, err := Explain(context.Background(), s, q, cites); err == nil || !strings.Contains(err.Error(), "shared mount") {
			t.Errorf("%q: err %v, want one naming the shared mount", q, err)
		}
	}
}

// TestExplainCountsEqualRun: the explanation's count is the query's count
// and no stage ever grows, over the generated store and every query the
// cue index is checked with.
func TestExplainCountsEqualRun(t *testing.T) {
	s := genStore(t, 600)
	scan := Scan{Store: s}
	for _, qs := range equivQueries {
		hits, err := Run(context.Background(), scan, mustParse(t, qs), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Explain(context.Background(), s, qs, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := "\ncount: " + strconv.Itoa(len(hits)) + "\n"; !strings.HasSuffix(string(b), want) {
			t.Errorf("%s: explain ends %q, the query has %d\n%s", qs, b[max(0, len(b)-20):], len(hits), b)
		}
		prev := -1
		for _, st := range explainCounts(t, b) {
			n, _ := strconv.Atoi(st[1])
			if prev >= 0 && n > prev {
				t.Errorf("%s: stage %s grows %d → %d\n%s", qs, st[0], prev, n, b)
			}
			prev = n
		}
	}
}

// BenchmarkExplain compares explaining a query (a scan that tests each
// term and gathers hints) with answering it by the scan alone, over the
// same generated store (bench/index.md, "explain").
func BenchmarkExplain(b *testing.B) {
	s := genStore(b, 30000)
	const qs = "tag:stuck near:0,0 r:100 y:>0 tree last:5"
	q, err := query.Parse(qs)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("scan", func(b *testing.B) {
		for b.Loop() {
			if _, err := (Scan{Store: s}).Search(context.Background(), q); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("explain", func(b *testing.B) {
		for b.Loop() {
			if _, err := Explain(context.Background(), s, qs, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
