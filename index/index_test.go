package index

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/index/query"
)

// testStore writes a store with one earlier life (2 rows) and a current
// life (5 rows and a malformed line) and returns it.
func testStore(t *testing.T) *episodes.Store {
	t.Helper()
	dir := t.TempDir()
	rowf := func(id string, a, b int, act, tags string, x, y, z float64, summary string) string {
		actJSON := "null"
		if act != "" {
			actJSON = fmt.Sprintf("%q", act)
		}
		var tl []string
		for _, tg := range strings.Split(tags, ",") {
			if tg != "" {
				tl = append(tl, fmt.Sprintf("%q", tg))
			}
		}
		return fmt.Sprintf(`{"id": %q, "path": "episodes/%s", "image": "episodes/%s/observation/image.png", "first_step": %d, "last_step": %d, "action_kind": %s, "summary": %q, "tags": [%s], "x": %v, "y": %v, "z": %v}`,
			id, id, id, a, b, actJSON, summary, strings.Join(tl, ", "), x, y, z)
	}
	write := func(rel string, lines ...string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("previous/life_1/index.jsonl",
		rowf("ep_000000", 0, 0, "", "initial", 0, 0, 0, "initial state"),
		rowf("ep_000001", 0, 10, "go_to", "stuck", 10, 0, 0, "go_to blocked by a tree"),
	)
	write("index.jsonl",
		rowf("ep_000000", 0, 0, "", "initial", 0, 0, 0, "initial state"),
		rowf("ep_000001", 0, 20, "mine_ahead", "broke,note", 3, 4, 0, "dug into the cave"),
		`{"id": "ep_000002", this line is torn`,
		rowf("ep_000003", 20, 40, "go_to", "stuck", 6, 0, 0, "go_to stuck at the river"),
		rowf("ep_000004", 40, 41, "look", "", 0, -10, 0, "looked down the shaft"),
		rowf("ep_000005", 41, 60, "mine_ahead", "broke", -6, 20, 0, "dug up to the surface"),
	)
	write("mine/notes.md", "# notes", "the cave is at ep_000001, dug from the surface", "the river blocks the way: ep_000003", "see also previous/life_1/episodes/ep_000001")
	s, err := episodes.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ids(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, fmt.Sprintf("%d:%s", h.Life, filepath.Base(h.Dir)))
	}
	return out
}

// TestScanRun checks hand-worked answers, from the scan and the cue index.
func TestScanRun(t *testing.T) {
	s := testStore(t)
	cites := func(ctx context.Context) ([]Cite, error) {
		return []Cite{
			{Dir: "episodes/ep_000001", File: "mine/notes.md", Line: "the cave is at ep_000001, dug from the surface"},
			{Dir: "episodes/ep_000003", File: "mine/notes.md", Line: "the river blocks the way: ep_000003"},
			{Dir: "previous/life_1/episodes/ep_000001", File: "mine/notes.md", Line: "see also previous/life_1/episodes/ep_000001"},
		}, nil
	}
	tests := []struct {
		q    string
		want []string
	}{
		{"tag:stuck", []string{"2:ep_000003"}},
		{"tag:stuck life:1", []string{"1:ep_000001"}},
		{"tag:stuck life:all", []string{"1:ep_000001", "2:ep_000003"}},
		{"tag:broke", []string{"2:ep_000001", "2:ep_000005"}},
		{"tag:broke last:1", []string{"2:ep_000005"}},
		{"tag:broke last:50", []string{"2:ep_000001", "2:ep_000005"}}, // last larger than the result
		{"action:go_to action:look", []string{"2:ep_000003", "2:ep_000004"}},
		{"steps:20..20", []string{"2:ep_000001", "2:ep_000003"}}, // both touch step 20
		{"steps:15..45", []string{"2:ep_000001", "2:ep_000003", "2:ep_000004", "2:ep_000005"}},
		{"near:0,0", []string{"2:ep_000000", "2:ep_000001", "2:ep_000003", "2:ep_000004", "2:ep_000005"}}, // 6 is on the boundary
		{"near:0,0 r:5.9", []string{"2:ep_000000", "2:ep_000001", "2:ep_000004"}},
		{"near:0,0,0 r:5", []string{"2:ep_000000", "2:ep_000001"}},
		{"y:<0", []string{"2:ep_000004"}},
		{"y:>4", []string{"2:ep_000005"}},
		{"cave", []string{"2:ep_000001"}},
		{`"go to"`, []string{"2:ep_000003"}},
		{"tag:nothing", nil}, // empty, not an error
		{"in:mine", []string{"2:ep_000001", "2:ep_000003"}},
		{"in:mine river", []string{"2:ep_000003"}},
		{"in:mine life:all", []string{"1:ep_000001", "2:ep_000001", "2:ep_000003"}},
		{"in:mine life:all last:1", []string{"2:ep_000003"}},
		{"in:mine tag:stuck", []string{"2:ep_000003"}},
	}
	cue, _, err := Open(context.Background(), s, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer cue.Close()
	for _, searcher := range []struct {
		name string
		s    Searcher
	}{{"scan", Scan{Store: s}}, {"cue", cue}} {
		for _, tt := range tests {
			t.Run(searcher.name+"/"+tt.q, func(t *testing.T) {
				q, err := query.Parse(tt.q)
				if err != nil {
					t.Fatal(err)
				}
				hits, err := Run(context.Background(), searcher.s, q, cites)
				if err != nil {
					t.Fatal(err)
				}
				if got := ids(hits); !reflect.DeepEqual(got, tt.want) {
					t.Errorf("%q = %v, want %v", tt.q, got, tt.want)
				}
			})
		}
	}
}

func TestQuerier(t *testing.T) {
	s := testStore(t)
	qr := &Querier{Searcher: Scan{Store: s}}
	rows, dirs, err := qr.Query(context.Background(), "tag:stuck life:all")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"previous/life_1/episodes/ep_000001", "episodes/ep_000003"}; !reflect.DeepEqual(dirs, want) {
		t.Errorf("dirs = %q, want %q", dirs, want)
	}
	// Rows are verbatim.
	b, _ := os.ReadFile(s.Path("index.jsonl"))
	if !strings.Contains(string(b), string(rows[1])+"\n") || !strings.HasPrefix(string(rows[1]), `{"id": "ep_000003", "path"`) {
		t.Errorf("row not verbatim: %s", rows[1])
	}
	if _, _, err := qr.Query(context.Background(), "steps:9"); err == nil || !strings.Contains(err.Error(), `bad term "steps:9"`) {
		t.Errorf("bad query error = %v", err)
	}
	if _, _, err := qr.Query(context.Background(), "in:mine"); err == nil || !strings.Contains(err.Error(), "in:mine is not available") {
		t.Errorf("in:mine without citations: %v", err)
	}
	if !strings.Contains(qr.Grammar(), "near:X,Z") {
		t.Error("grammar lacks near:")
	}
}

// TestScanRealStores runs queries over the committed stores and checks
// each hit against the row's own fields.
func TestScanRealStores(t *testing.T) {
	for _, dir := range []string{"../testdata/paper-run/store", "../examples/runs/luanti-forest/store"} {
		s, err := episodes.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		all, err := Scan{Store: s}.Search(context.Background(), mustParse(t, "life:all"))
		if err != nil {
			t.Fatal(err)
		}
		if len(all) < 50 {
			t.Fatalf("%s: only %d rows", dir, len(all))
		}
		last := all[len(all)-1]
		r, _ := episodes.ParseRow(last.Row)
		hits, err := Scan{Store: s}.Search(context.Background(), mustParse(t, fmt.Sprintf("near:%v,%v r:0 steps:%d..%d last:1", r.X, r.Z, r.FirstStep, r.LastStep)))
		if err != nil || len(hits) != 1 || hits[0].Dir != last.Dir {
			t.Errorf("%s: the last row does not find itself: %v %v", dir, ids(hits), err)
		}
	}
}

func mustParse(t *testing.T, s string) *query.Query {
	t.Helper()
	q, err := query.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return q
}
