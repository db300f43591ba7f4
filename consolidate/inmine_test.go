package consolidate

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mfm-project/mfm/index"
	"github.com/mfm-project/mfm/index/query"
)

// TestInMine: the in:mine source lists each citation of an existing
// episode with the whole paragraph or list item citing it (not only the
// matched text or line), by file; citations of missing episodes are left
// out; and index.Run keeps exactly the episodes cited by a paragraph or
// list item holding the query's words, on any of its lines.
func TestInMine(t *testing.T) {
	s := constructed(t)
	const cave = "# cave\n\n- the cave entrance: ep_000008\n- nothing here\n- ep_000009 ep_000099 by the river\n" +
		"- dig_down to the floor\n  of the shaft; see ep_000010\n  and ep_000011\n\n" +
		"A paragraph on the lava\nthat burned at ep_000012.\n\nep_000013 stands alone\n"
	const shaft = "- dig_down to the floor\n  of the shaft; see ep_000010\n  and ep_000011"
	const lava = "A paragraph on the lava\nthat burned at ep_000012."
	if err := os.WriteFile(s.Path("mine", "cave.md"), []byte(cave), 0o644); err != nil {
		t.Fatal(err)
	}
	rs := &Resolver{Store: s}
	cites, err := rs.InMine()(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	notes := "stuck at ep_000003 and episodes/ep_4/frames/000041.png; life 1 step 65; ep_000099 is gone"
	want := []index.Cite{
		{Dir: "episodes/ep_000008", File: "mine/cave.md", Line: "- the cave entrance: ep_000008"},
		{Dir: "episodes/ep_000009", File: "mine/cave.md", Line: "- ep_000009 ep_000099 by the river"},
		{Dir: "episodes/ep_000010", File: "mine/cave.md", Line: shaft},
		{Dir: "episodes/ep_000011", File: "mine/cave.md", Line: shaft},
		{Dir: "episodes/ep_000012", File: "mine/cave.md", Line: lava},
		{Dir: "episodes/ep_000013", File: "mine/cave.md", Line: "ep_000013 stands alone"},
		{Dir: "episodes/ep_000003", File: "mine/notes.md", Line: notes},
		{Dir: "episodes/ep_000004", File: "mine/notes.md", Line: notes},
		{Dir: "episodes/ep_000006", File: "mine/notes.md", Line: notes}, // step 65
	}
	if !reflect.DeepEqual(cites, want) {
		t.Errorf("cites:\n%+v\nwant\n%+v", cites, want)
	}

	for q, wantDirs := range map[string][]string{
		"in:mine stuck":           {"episodes/ep_000003", "episodes/ep_000004", "episodes/ep_000006"},
		"in:mine stuck tag:stuck": {"episodes/ep_000003", "episodes/ep_000004"},
		"in:mine cave":            {"episodes/ep_000008"},
		"in:mine river":           {"episodes/ep_000009"},
		"in:mine dig_down":        {"episodes/ep_000010", "episodes/ep_000011"},
		"in:mine \"the shaft\"":   {"episodes/ep_000010", "episodes/ep_000011"},
		"in:mine lava":            {"episodes/ep_000012"},
		"in:mine alone":           {"episodes/ep_000013"},
		"in:mine here":            nil, // "nothing here" cites nothing
		"in:mine tunnel":          nil,
	} {
		pq, err := query.Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		hits, err := index.Run(context.Background(), index.Scan{Store: s}, pq, rs.InMine())
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var dirs []string
		for _, h := range hits {
			dirs = append(dirs, filepath.ToSlash(h.Dir))
		}
		if !reflect.DeepEqual(dirs, wantDirs) {
			t.Errorf("%s: %v, want %v", q, dirs, wantDirs)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := rs.InMine()(ctx); err != context.Canceled {
		t.Errorf("cancelled: %v", err)
	}
}

// TestPreload: Preload reads every life's index in the background,
// without a call asking for it.
func TestPreload(t *testing.T) {
	s := constructed(t)
	rs := &Resolver{Store: s}
	rs.Preload()
	read := func() bool {
		rs.mu.Lock()
		defer rs.mu.Unlock()
		c := rs.lives[s.Path("index.jsonl")]
		return c != nil && len(c.li.ranges) == 15
	}
	for deadline := time.Now().Add(30 * time.Second); !read(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("Preload never read index.jsonl")
		}
	}
}

func TestBlocks(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"paragraphs end at a blank line", "a\nb\n\nc", []string{"a\nb", "a\nb", "", "c"}},
		{"list items", "- a\n  b\n* c\n1. d\ne", []string{"- a\n  b", "- a\n  b", "* c", "1. d\ne", "1. d\ne"}},
		{"a heading stands alone", "# h\nx\n## i", []string{"# h", "x", "## i"}},
		{"a paragraph then a list", "p\n- i\n\t- j", []string{"p", "- i", "\t- j"}},
		{"not markers", "#tag\n-dash\n3.5 blocks", []string{"#tag\n-dash\n3.5 blocks", "#tag\n-dash\n3.5 blocks", "#tag\n-dash\n3.5 blocks"}},
		{"blank with spaces", "a\n  \nb", []string{"a", "", "b"}},
		{"empty", "", []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Blocks([]byte(tt.in)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Blocks(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// FuzzBlocks: the blocks are ordered, disjoint runs of lines that hold
// every non-blank line and no blank one, and Blocks gives each line the
// text of its run.
func FuzzBlocks(f *testing.F) {
	f.Fuzz(func(t *testing.T, text string) {
		lines := strings.Split(text, "\n")
		inBlock := make([]bool, len(lines))
		prev := 0
		for _, sp := range blockSpans(lines) {
			if sp[0] < prev || sp[1] <= sp[0] || sp[1] > len(lines) {
				t.Fatalf("span %v after %d of %d lines", sp, prev, len(lines))
			}
			for i := sp[0]; i < sp[1]; i++ {
				inBlock[i] = true
			}
			prev = sp[1]
		}
		bs := Blocks([]byte(text))
		if len(bs) != len(lines) {
			t.Fatalf("%d blocks for %d lines", len(bs), len(lines))
		}
		for i, l := range lines {
			blank := strings.TrimSpace(l) == ""
			if blank == inBlock[i] || blank != (bs[i] == "") {
				t.Fatalf("line %d %q: in a block %v, block %q", i, l, inBlock[i], bs[i])
			}
			if !blank && !strings.Contains("\n"+bs[i]+"\n", "\n"+l+"\n") {
				t.Fatalf("line %d %q not in its block %q", i, l, bs[i])
			}
		}
	})
}
