package episodes

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLatestFrameConfined: with no now/ directory the latest frame comes
// from the last row's image; a row naming a file outside the store (by
// "..", absolutely, or through a symlink) is refused, never served, and
// CheckConfinement reports it on its line.
func TestLatestFrameConfined(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret.png")
	if err := os.WriteFile(secret, []byte("root only"), 0o600); err != nil {
		t.Fatal(err)
	}
	depth := strings.Repeat("../", strings.Count(secret, "/")+2)
	cases := []struct {
		name string
		row  string // the last index row
		link bool   // episodes/ep_000001/observation/image.png links to the secret
		// wantLatest: the store-relative path LatestFramePath returns,
		// "" for an error (and never the secret)
		wantLatest string
		wantIssue  string // what CheckConfinement says about line 2, "" for nothing
	}{
		{name: "image climbs out", row: `{"id": "ep_000001", "image": "` + depth + strings.TrimPrefix(secret, "/") + `"}`,
			wantLatest: "episodes/ep_000000/observation/image.png"}, // the row is malformed: skipped
		{name: "image absolute", row: `{"id": "ep_000001", "image": "` + secret + `"}`,
			wantLatest: "episodes/ep_000000/observation/image.png"},
		{name: "id climbs out", row: `{"id": "../../../../../../etc"}`,
			wantLatest: "episodes/ep_000000/observation/image.png"},
		{name: "image links out", row: `{"id": "ep_000001", "image": "episodes/ep_000001/observation/image.png"}`, link: true,
			wantIssue: `image "episodes/ep_000001/observation/image.png" does not stay inside the store`},
		{name: "path links out", row: `{"id": "ep_000001", "path": "episodes/ep_000001"}`, link: true,
			wantIssue: `does not stay inside the store`},
		{name: "inside", row: `{"id": "ep_000001", "image": "episodes/ep_000001/observation/image.png"}`,
			wantLatest: "episodes/ep_000001/observation/image.png"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := Init(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			obs := func(id string) string { return s.Path(EpisodesDir, id, filepath.FromSlash(ObservationFileName)) }
			for _, id := range []string{"ep_000000", "ep_000001"} {
				must(t, os.MkdirAll(filepath.Dir(obs(id)), 0o755))
			}
			must(t, os.WriteFile(obs("ep_000000"), []byte("frame 0"), 0o644))
			switch {
			case c.link && strings.Contains(c.row, `"path"`):
				must(t, os.RemoveAll(s.Path(EpisodesDir, "ep_000001")))
				must(t, os.MkdirAll(filepath.Join(filepath.Dir(secret), "observation"), 0o755))
				must(t, os.Symlink(filepath.Dir(secret), s.Path(EpisodesDir, "ep_000001")))
			case c.link:
				must(t, os.Symlink(secret, obs("ep_000001")))
			default:
				must(t, os.WriteFile(obs("ep_000001"), []byte("frame 1"), 0o644))
			}
			index := `{"id": "ep_000000", "image": "episodes/ep_000000/observation/image.png"}` + "\n" + c.row + "\n"
			must(t, os.WriteFile(s.Path(IndexFileName), []byte(index), 0o644))

			got, err := LatestFramePath(s)
			if got != "" {
				if b, _ := os.ReadFile(got); string(b) == "root only" {
					t.Fatalf("LatestFramePath serves the file outside the store: %s", got)
				}
			}
			if c.wantLatest == "" {
				if err == nil || errors.Is(err, fs.ErrNotExist) {
					t.Errorf("LatestFramePath = %q, %v; want an error saying the frame is outside the store", got, err)
				}
			} else if err != nil || got != s.Path(filepath.FromSlash(c.wantLatest)) {
				t.Errorf("LatestFramePath = %q, %v; want %s", got, err, c.wantLatest)
			}

			issues, err := CheckConfinement(s)
			if err != nil {
				t.Fatal(err)
			}
			if c.wantIssue == "" {
				if len(issues) != 0 {
					t.Errorf("issues %v, want none", issues)
				}
				return
			}
			if len(issues) != 1 || issues[0].Line != 2 || issues[0].Severity != Problem || !strings.Contains(issues[0].Msg, c.wantIssue) {
				t.Errorf("issues %v, want one problem on line 2 saying %q", issues, c.wantIssue)
			}
			// fsck reports it too.
			rep, err := Verify(s)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(rep.Issues, func(i Issue) bool { return i.Severity == Problem && strings.Contains(i.Msg, c.wantIssue) }) {
				t.Errorf("Verify issues %v, want a problem saying %q", rep.Issues, c.wantIssue)
			}
		})
	}
}

// TestParseRowRefusesEscapes: a row whose id or image could name a file
// outside the store does not parse, so no reader follows it and Verify
// reports the line.
func TestParseRowRefusesEscapes(t *testing.T) {
	for _, c := range []struct {
		line string
		ok   bool
	}{
		{`{"id": "ep_000001", "image": "episodes/ep_000001/observation/image.png"}`, true},
		{`{"id": "ep_000001", "image": ""}`, true},
		{`{"id": "ep_000001", "image": "../x.png"}`, false},
		{`{"id": "ep_000001", "image": "episodes/../../x.png"}`, false},
		{`{"id": "ep_000001", "image": "/etc/hostname"}`, false},
		{`{"id": "ep_000001", "image": "a\u0000b"}`, false},
		{`{"id": ".."}`, false},
		{`{"id": "a/b"}`, false},
		{`{"id": "ep_000001", "path": "../x"}`, false},
	} {
		_, err := ParseRow([]byte(c.line))
		if (err == nil) != c.ok {
			t.Errorf("ParseRow(%s) = %v, want ok=%v", c.line, err, c.ok)
		}
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
