package consolidate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mfm-project/mfm/episodes"
)

// TestKnowledgeCitationsKeepTheirLife: K's evidence names each episode
// with its life; life 2's mine/.check must not read life 1's ep_000009 as
// life 2's (the committed two-lives run has 8 such), and an evidence
// episode that exists in no life is reported with the line of its id.
func TestKnowledgeCitationsKeepTheirLife(t *testing.T) {
	src := "../examples/runs/llm-two-lives-k/store"
	dir := t.TempDir()
	for _, f := range []string{episodes.FormatFileName, episodes.IndexFileName, "previous/life_1/" + episodes.IndexFileName, KnowledgeFile} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := episodes.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := Citations(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 22 {
		t.Fatalf("%d citations in K, want its 22 support episodes", len(cs))
	}
	for _, c := range cs {
		if c.Missing != "" {
			t.Errorf("%s:%d %q: %s", c.File, c.Line, c.Text, c.Missing)
		}
		if c.Life == 1 && !strings.HasPrefix(c.Dir, "previous/life_1/") {
			t.Errorf("%q resolved to %s, not life 1's episode", c.Text, c.Dir)
		}
	}

	// An episode of no life: reported at the line of its id.
	k := filepath.Join(dir, KnowledgeFile)
	b, _ := os.ReadFile(k)
	b = []byte(strings.Replace(string(b), `"id": "ep_000009"`, `"id": "ep_000099"`, 1))
	if err := os.WriteFile(k, b, 0o644); err != nil {
		t.Fatal(err)
	}
	want := 0
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "ep_000099") {
			want = i + 1
		}
	}
	cs, err = Citations(s)
	if err != nil {
		t.Fatal(err)
	}
	var missing []Resolved
	for _, c := range cs {
		if c.Missing != "" {
			missing = append(missing, c)
		}
	}
	if len(missing) != 1 || missing[0].Line != want || !strings.Contains(missing[0].Missing, "ep_000099 does not exist in life 1") {
		t.Fatalf("missing: %+v, want ep_000099 of life 1 at line %d", missing, want)
	}
}
