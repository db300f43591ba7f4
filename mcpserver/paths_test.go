package mcpserver

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mfm-project/mfm/episodes"
)

func TestCleanPath(t *testing.T) {
	tests := []struct {
		in, want string
		err      string
	}{
		{"index.jsonl", "index.jsonl", ""},
		{"/index.jsonl", "index.jsonl", ""},
		{"./mine//notes.md", "mine/notes.md", ""},
		{"/mfm/episodes/ep_000044/outcome.json", "episodes/ep_000044/outcome.json", ""},
		{"/mfm", "", ""},
		{"/mfmx/a", "mfmx/a", ""},
		{"", "", ""},
		{"/", "", ""},
		{"q/tag:stuck last:5/count", "q/tag:stuck last:5/count", ""},
		{"..", "", `contains ".."`},
		{"mine/../index.jsonl", "", `contains ".."`},
		{"/mfm/../etc", "", `contains ".."`},
		{"a\x00b", "", "control character"},
		{"a\nb", "", "control character"},
		{"\xff", "", "not valid UTF-8"},
		{strings.Repeat("x", MaxPathLen+1), "", "at most 4096"},
	}
	for _, tc := range tests {
		got, err := CleanPath(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("CleanPath(%.40q) = %q, %v; want an error saying %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("CleanPath(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// fuzzStore makes a small store with symlinks in mine/ that lead inside
// the memory, into .mfm/ and out of it.
func fuzzStore(t testing.TB) (realRoots, string) {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "store")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{"episodes/ep_000001/observation", "mine/sub", ".mfm", "outside"} {
		p := filepath.Join(root, d)
		if d == "outside" {
			p = outside
		}
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range map[string]string{
		"store/index.jsonl":                    "{}\n",
		"store/mfm-store.json":                 `{"format": "mfm-store", "version": 1}`,
		"store/.mfm/secret":                    "s",
		"store/episodes/ep_000001/action.json": "{}",
		"store/mine/notes.md":                  "n",
		"outside/secret":                       "s",
	} {
		if err := os.WriteFile(filepath.Join(base, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range map[string]string{
		"mine/in":      "../episodes",
		"mine/idx":     "../index.jsonl",
		"mine/out":     outside,
		"mine/up":      "../..",
		"mine/meta":    "../.mfm",
		"mine/marker":  "../mfm-store.json",
		"mine/loop":    "loop",
		"mine/sub/out": "../../../outside/secret",
		"mine/self":    ".",
	} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	s, err := episodes.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := newRealRoots(s)
	if err != nil {
		t.Fatal(err)
	}
	return rr, outside
}

// FuzzResolvePath checks the path resolver's guarantees for any input: a
// path CleanPath accepts is clean and canonical, reads resolve only
// inside the memory (never to .mfm/ or the format marker), and writes
// only inside mine/; nothing is created outside mine/.
func FuzzResolvePath(f *testing.F) {
	for _, seed := range []string{
		"index.jsonl", "/mfm/mine/notes.md", "mine/in/ep_000001/action.json", "mine/out/secret",
		"mine/up/outside/secret", "mine/meta/secret", "mine/marker", "mine/loop", "mine/sub/out",
		"mine/self/self/notes.md", "mine/new/dir/file.md", "../x", "mine/./../x", "mine/idx",
		".mfm/secret", "mfm-store.json", "mine", "", "a\x00b",
	} {
		f.Add(seed, true)
	}
	rr, outside := fuzzStore(f)
	f.Fuzz(func(t *testing.T, p string, create bool) {
		rel, err := CleanPath(p)
		if err != nil {
			return
		}
		if again, err := CleanPath(rel); err != nil || again != rel {
			t.Fatalf("CleanPath(%q) = %q, which cleans to %q, %v", p, rel, again, err)
		}
		for _, seg := range strings.Split(rel, "/") {
			if rel != "" && (seg == "" || seg == "." || seg == "..") {
				t.Fatalf("CleanPath(%q) = %q has segment %q", p, rel, seg)
			}
		}
		if !hiddenRoot(rel) {
			if real, err := rr.resolveRead(rel); err == nil {
				if !within(real, rr.root) {
					t.Fatalf("read %q resolved outside the store: %s", rel, real)
				}
				r, _ := filepath.Rel(rr.root, real)
				if r != "." && hiddenRoot(filepath.ToSlash(r)) {
					t.Fatalf("read %q resolved into %s", rel, r)
				}
			}
		}
		if strings.HasPrefix(rel, "mine/") && len(rel) < 200 {
			if real, err := rr.resolveWrite(rel, create); err == nil && !within(real, rr.mine) {
				t.Fatalf("write %q resolved outside mine/: %s", rel, real)
			}
		}
		des, err := os.ReadDir(outside)
		if err != nil || len(des) != 1 {
			t.Fatalf("outside/ changed: %v %v", des, err)
		}
	})
}

func TestResolveWriteRefusesDirectories(t *testing.T) {
	rr, _ := fuzzStore(t)
	for rel, want := range map[string]string{
		"mine/sub":          "is a directory",
		"mine/notes.md/x":   "is a file, not a directory",
		"mine/loop/x":       "resolve",
		"mine/out/x":        "leads outside the memory",
		"mine/up/outside/x": "leads outside the memory",
	} {
		_, err := rr.resolveWrite(rel, true)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("resolveWrite(%q): %v, want an error saying %q", rel, err, want)
		}
	}
	if _, err := rr.resolveWrite("mine/absent/x", false); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("resolveWrite without create of a missing directory: %v", err)
	}
}
