package mcpserver

import (
	"bytes"
	"context"
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mfm-project/mfm/index/query"
)

// decodePNG checks b is a PNG and returns its size.
func decodePNG(t *testing.T, b []byte) (w, h int) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	return img.Bounds().Dx(), img.Bounds().Dy()
}

func TestReadTool(t *testing.T) {
	cs, s := newTestServer(t, nil)
	index, err := os.ReadFile(s.Path("index.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(index), "\n")
	outcome, _ := os.ReadFile(s.Path("episodes/ep_000044/outcome.json"))
	tests := []struct {
		name      string
		args      map[string]any
		wantText  string // exact text of the first content
		contains  string // or a substring of all text
		wantStart int
		wantLines int
		wantNext  int
		wantKind  string
	}{
		{name: "index line range", args: map[string]any{"path": "index.jsonl", "offset": 3, "limit": 2},
			wantText: lines[2] + lines[3], wantStart: 3, wantLines: 2, wantNext: 5, wantKind: "text"},
		{name: "index tail", args: map[string]any{"path": "index.jsonl", "offset": -2},
			wantText: lines[248] + lines[249], wantStart: 249, wantLines: 2, wantKind: "text"},
		{name: "brief's /mfm prefix", args: map[string]any{"path": "/mfm/episodes/ep_000044/outcome.json"},
			wantText: string(outcome), wantStart: 1, wantKind: "text"},
		{name: "episode directory", args: map[string]any{"path": "episodes/ep_000044"},
			wantText: "action.json\ncited-by\nframes/\nobservation/\noutcome.json\nstate/\nsteps.jsonl\n", wantStart: 1, wantLines: 7, wantKind: "directory"},
		{name: "root", args: map[string]any{"path": ""}, contains: "README.md\nlogs.txt\nindex.jsonl\ngrid.jsonl\nepisodes/\nprevious/\nmine/\nnow/\nq/\nmap/\n", wantKind: "directory"},
		{name: "logs.txt lines", args: map[string]any{"path": "logs.txt", "offset": 2, "limit": 1},
			wantText: "Action 0 | Step 0 | INITIAL STATE\n", wantStart: 2, wantLines: 1, wantNext: 3, wantKind: "text"},
		{name: "generated README", args: map[string]any{"path": "README.md", "limit": 2000}, contains: "250 episodes in this life", wantKind: "text"},
		{name: "query results as in the mount", args: map[string]any{"path": "q/tag:damage/count"}, wantText: "4\n", wantKind: "text"},
		{name: "query match leads to the episode", args: map[string]any{"path": "q/tag:damage/ep_000044/outcome.json"}, wantText: string(outcome), wantKind: "text"},
		{name: "cited-by", args: map[string]any{"path": "episodes/ep_000044/cited-by"}, wantText: "(episodes/ep_000044/cited-by is empty)", wantKind: "text"},
		{name: "past the end", args: map[string]any{"path": "index.jsonl", "offset": 1000}, wantText: "(index.jsonl has fewer than 1000 lines)", wantKind: "text"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, cs, ToolRead, tc.args)
			if res.IsError {
				t.Fatalf("tool error: %s", texts(res))
			}
			var out ReadOutput
			structured(t, res, &out)
			if tc.wantText != "" {
				got := res.Content[0].(*mcp.TextContent).Text
				if got != tc.wantText {
					t.Errorf("text:\n%q\nwant\n%q", got, tc.wantText)
				}
			}
			if tc.contains != "" && !strings.Contains(texts(res), tc.contains) {
				t.Errorf("text does not contain %q:\n%s", tc.contains, texts(res))
			}
			if out.Kind != tc.wantKind {
				t.Errorf("kind %q, want %q", out.Kind, tc.wantKind)
			}
			if tc.wantStart != 0 && out.StartLine != tc.wantStart {
				t.Errorf("start_line %d, want %d", out.StartLine, tc.wantStart)
			}
			if tc.wantLines != 0 && out.Lines != tc.wantLines {
				t.Errorf("lines %d, want %d", out.Lines, tc.wantLines)
			}
			if out.NextOffset != tc.wantNext {
				t.Errorf("next_offset %d, want %d", out.NextOffset, tc.wantNext)
			}
		})
	}
}

func TestReadPagingCoversTheFile(t *testing.T) {
	cs, s := newTestServer(t, func(c *Config) { c.Limits = DefaultLimits(); c.Limits.MaxTextBytes = 4096 })
	want, err := os.ReadFile(s.Path("logs.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	offset, calls := 1, 0
	for offset != 0 {
		res := call(t, cs, ToolRead, map[string]any{"path": "logs.txt", "offset": offset, "limit": 2000})
		if res.IsError {
			t.Fatalf("tool error: %s", texts(res))
		}
		var out ReadOutput
		structured(t, res, &out)
		got.WriteString(res.Content[0].(*mcp.TextContent).Text)
		if out.NextOffset != 0 && out.NextOffset != out.StartLine+out.Lines {
			t.Fatalf("next_offset %d after lines %d+%d", out.NextOffset, out.StartLine, out.Lines)
		}
		if len(res.Content[0].(*mcp.TextContent).Text) > 4096 {
			t.Fatalf("a page of %d bytes, over the 4096-byte cap", len(res.Content[0].(*mcp.TextContent).Text))
		}
		offset = out.NextOffset
		if calls++; calls > 10000 {
			t.Fatal("paging does not end")
		}
	}
	if got.String() != string(want) {
		t.Fatalf("pages joined differ from logs.txt (%d bytes vs %d)", got.Len(), len(want))
	}
	if calls < 2 {
		t.Fatalf("logs.txt read in %d call(s); the cap should have paged it", calls)
	}
}

func TestReadImage(t *testing.T) {
	cs, s := newTestServer(t, nil)
	want, _ := os.ReadFile(s.Path("episodes/ep_000044/observation/image.png"))
	res := call(t, cs, ToolRead, map[string]any{"path": "episodes/ep_000044/observation/image.png"})
	if res.IsError {
		t.Fatalf("tool error: %s", texts(res))
	}
	imgs := images(res)
	if len(imgs) != 1 || imgs[0].MIMEType != "image/png" || !bytes.Equal(imgs[0].Data, want) {
		t.Fatalf("want the frame's bytes as one image/png, got %d images", len(imgs))
	}
	res = call(t, cs, ToolRead, map[string]any{"path": "now/frame.png"})
	if res.IsError || len(images(res)) != 1 {
		t.Fatalf("now/frame.png: %s", texts(res))
	}
}

func TestViewTool(t *testing.T) {
	cs, _ := newTestServer(t, nil)
	tests := []struct {
		path       string
		w, h       int
		textPrefix string
	}{
		{path: "episodes/ep_000044/observation/image@crop=64,48,128,96@zoom=2.png", w: 256, h: 192},
		{path: "episodes/ep_000044/observation/image@grid.png"},
		{path: "episodes/ep_000044/sheet.png"},
		{path: "episodes/ep_000044/observation/image@thennow.png"},
		{path: "map/here.png"},
		{path: "q/tag:damage/sheet.png"},
		{path: "map/here@r=5@north=+z.txt", textPrefix: ""},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			res := call(t, cs, ToolView, map[string]any{"path": tc.path})
			if res.IsError {
				t.Fatalf("tool error: %s", texts(res))
			}
			if strings.HasSuffix(tc.path, ".txt") {
				if len(images(res)) != 0 || !strings.Contains(texts(res), "@") {
					t.Fatalf("want a text map with the centre @, got %q", texts(res))
				}
				return
			}
			imgs := images(res)
			if len(imgs) != 1 {
				t.Fatalf("want one image, got %d", len(imgs))
			}
			w, h := decodePNG(t, imgs[0].Data)
			if tc.w != 0 && (w != tc.w || h != tc.h) {
				t.Errorf("size %dx%d, want %dx%d", w, h, tc.w, tc.h)
			}
		})
	}
}

func TestQueryTool(t *testing.T) {
	cs, _ := newTestServer(t, nil)
	damage := []string{"episodes/ep_000044", "episodes/ep_000075", "episodes/ep_000180", "episodes/ep_000244"}
	tests := []struct {
		name     string
		args     map[string]any
		want     []string
		count    int
		images   int
		contains string
	}{
		{name: "cue", args: map[string]any{"query": "tag:damage"}, want: damage, count: 4, contains: "ep_000044  steps 605-615"},
		{name: "cue limit keeps the latest", args: map[string]any{"query": "tag:damage", "limit": 2}, want: damage[2:], count: 4},
		{name: "cue with sheet", args: map[string]any{"query": "tag:damage", "sheet": true}, want: damage, count: 4, images: 1},
		{name: "cue no match", args: map[string]any{"query": "tag:nosuchtag"}, count: 0, contains: "no matching episodes"},
		{name: "episodes.py", args: map[string]any{"episodes_py": []string{"--near", "-69.4", "188.6", "--radius", "1", "--action", "pillar_up"}},
			want: []string{"episodes/ep_000176", "episodes/ep_000239"}, count: 2, contains: "ep_000176  steps 2696-2731"},
		{name: "episodes.py sheet", args: map[string]any{"episodes_py": []string{"--tag", "damage", "--sheet", "/etc/evil.png"}}, want: damage, count: 4, images: 1, contains: "sheet: (the attached image)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, cs, ToolQuery, tc.args)
			if res.IsError {
				t.Fatalf("tool error: %s", texts(res))
			}
			var out QueryOutput
			structured(t, res, &out)
			if out.Count != tc.count {
				t.Errorf("count %d, want %d", out.Count, tc.count)
			}
			var dirs []string
			for _, r := range out.Rows {
				dirs = append(dirs, r.Dir)
				if r.Row["id"] != filepath.Base(r.Dir) {
					t.Errorf("row id %v in dir %s", r.Row["id"], r.Dir)
				}
			}
			if strings.Join(dirs, " ") != strings.Join(tc.want, " ") {
				t.Errorf("dirs %v, want %v", dirs, tc.want)
			}
			if got := len(images(res)); got != tc.images {
				t.Errorf("%d images, want %d", got, tc.images)
			}
			for _, img := range images(res) {
				decodePNG(t, img.Data)
			}
			if tc.contains != "" && !strings.Contains(texts(res), tc.contains) {
				t.Errorf("text does not contain %q:\n%s", tc.contains, texts(res))
			}
		})
	}
	if _, err := os.Stat("/etc/evil.png"); err == nil {
		t.Fatal("episodes.py --sheet wrote outside the memory")
	}
}

func TestWriteAndEdit(t *testing.T) {
	cs, s := newTestServer(t, nil)
	steps := []struct {
		tool string
		args map[string]any
		want string // file content after
	}{
		{ToolWrite, map[string]any{"path": "mine/notes.md", "content": "- fall from the tower: ep_000044\n"}, "- fall from the tower: ep_000044\n"},
		{ToolWrite, map[string]any{"path": "mine/notes.md", "content": "- pillar out: ep_000176\n", "append": true}, "- fall from the tower: ep_000044\n- pillar out: ep_000176\n"},
		{ToolEdit, map[string]any{"path": "mine/notes.md", "old_text": "tower", "new_text": "13-block tower"}, "- fall from the 13-block tower: ep_000044\n- pillar out: ep_000176\n"},
		{ToolWrite, map[string]any{"path": "/mfm/mine/deep/er/plan.md", "content": "go north"}, ""},
	}
	for _, st := range steps {
		res := call(t, cs, st.tool, st.args)
		if res.IsError {
			t.Fatalf("%s %v: %s", st.tool, st.args, texts(res))
		}
		if st.want == "" {
			continue
		}
		b, err := os.ReadFile(s.Path("mine/notes.md"))
		if err != nil || string(b) != st.want {
			t.Fatalf("after %s: %q (%v), want %q", st.tool, b, err, st.want)
		}
	}
	if b, err := os.ReadFile(s.Path("mine/deep/er/plan.md")); err != nil || string(b) != "go north" {
		t.Fatalf("mine/deep/er/plan.md: %q %v", b, err)
	}
	res := call(t, cs, ToolCheck, nil)
	var out CheckOutput
	structured(t, res, &out)
	if res.IsError || out.Citations != 2 || out.Resolved != 2 || len(out.Missing) != 0 {
		t.Fatalf("check after writing: %+v %s", out, texts(res))
	}
	res = call(t, cs, ToolRead, map[string]any{"path": "episodes/ep_000044/cited-by"})
	if !strings.Contains(texts(res), "mine/notes.md") {
		t.Fatalf("cited-by does not list mine/notes.md: %q", texts(res))
	}
	call(t, cs, ToolWrite, map[string]any{"path": "mine/bad.md", "content": "see ep_999999\n"})
	res = call(t, cs, ToolCheck, map[string]any{"path": "mine/bad.md"})
	structured(t, res, &out)
	if out.Citations != 1 || len(out.Missing) != 1 || out.Missing[0].File != "mine/bad.md" || out.Missing[0].Line != 1 {
		t.Fatalf("check mine/bad.md: %+v", out)
	}
}

// treeHash maps every path of dir to its content or link target.
func treeHash(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			m[rel] = "-> " + l
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			m[rel] = string(b)
		default:
			m[rel] = "dir " + fi.Mode().String()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestBadCallsAreToolErrors(t *testing.T) {
	cs, s := newTestServer(t, func(c *Config) { c.Limits = DefaultLimits(); c.Limits.MaxImageBytes = 2000 })
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"mine/out":      outside,
		"mine/out.txt":  filepath.Join(outside, "secret.txt"),
		"mine/idx":      "../index.jsonl",
		"mine/meta":     "../.mfm",
		"mine/dangling": filepath.Join(outside, "missing.txt"),
	}
	if err := os.MkdirAll(s.Path(".mfm"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range links {
		if err := os.Symlink(target, s.Path(name)); err != nil {
			t.Fatal(err)
		}
	}
	before := treeHash(t, s.Root)
	beforeOut := treeHash(t, outside)
	tests := []struct {
		tool string
		args map[string]any
		want string // in the error text
	}{
		{ToolRead, map[string]any{"path": "../etc/passwd"}, `contains ".."`},
		{ToolRead, map[string]any{"path": "episodes/../../x"}, `contains ".."`},
		{ToolRead, map[string]any{"path": "mine/out/secret.txt"}, "leads outside the memory"},
		{ToolRead, map[string]any{"path": "mine/out.txt"}, "leads outside the memory"},
		{ToolRead, map[string]any{"path": "mine/meta"}, "leads outside the memory"},
		{ToolRead, map[string]any{"path": ".mfm"}, "not part of the memory"},
		{ToolRead, map[string]any{"path": "mfm-store.json"}, "not part of the memory"},
		{ToolRead, map[string]any{"path": "etc/passwd"}, "no such file or directory in the memory"},
		{ToolRead, map[string]any{"path": "episodes/ep_999999"}, "no such file"},
		{ToolRead, map[string]any{"path": "a\x00b"}, "control character"},
		{ToolRead, map[string]any{"path": strings.Repeat("a/", 3000)}, "at most 4096"},
		{ToolRead, map[string]any{"path": "index.jsonl", "limit": -1}, "negative"},
		{ToolRead, map[string]any{"path": "episodes/ep_000044/observation/image.png"}, "over the 2000-byte cap"},
		{ToolView, map[string]any{"path": "episodes/ep_000044/observation/image@zoom=16.png"}, "over the 2000-byte cap"},
		{ToolView, map[string]any{"path": "episodes/ep_000044/observation/image@zoom=04.png"}, "image@zoom=4.png"},
		{ToolView, map[string]any{"path": "episodes/ep_000044/observation/image@zoom=99.png"}, "zoom"},
		{ToolView, map[string]any{"path": "index.jsonl"}, "not a view"},
		{ToolView, map[string]any{"path": "../x@zoom=2.png"}, `contains ".."`},
		{ToolQuery, map[string]any{"query": "tag:"}, "tag:"},
		{ToolQuery, map[string]any{"query": "near:abc"}, "near:"},
		{ToolQuery, map[string]any{}, "give query"},
		{ToolQuery, map[string]any{"query": "x", "episodes_py": []string{"--last", "1"}}, "not both"},
		{ToolQuery, map[string]any{"episodes_py": []string{"--bogus"}}, "unrecognized arguments"},
		{ToolQuery, map[string]any{"episodes_py": []string{"--root", "/etc"}}, "no such file"},
		{ToolQuery, map[string]any{"episodes_py": []string{"--root", "../.."}}, `contains ".."`},
		{ToolWrite, map[string]any{"path": "index.jsonl", "content": "x"}, "read-only file system (EROFS)"},
		{ToolWrite, map[string]any{"path": "episodes/ep_000044/outcome.json", "content": "{}"}, "EROFS"},
		{ToolWrite, map[string]any{"path": "mine", "content": "x"}, "EROFS"},
		{ToolWrite, map[string]any{"path": "mine/../index.jsonl", "content": "x"}, `contains ".."`},
		{ToolWrite, map[string]any{"path": "mine/out/new.txt", "content": "x"}, "leads outside the memory"},
		{ToolWrite, map[string]any{"path": "mine/out.txt", "content": "x"}, "leads outside the memory"},
		{ToolWrite, map[string]any{"path": "mine/idx", "content": "x"}, "leads outside the memory"},
		{ToolWrite, map[string]any{"path": "mine/dangling", "content": "x"}, "missing file"},
		{ToolWrite, map[string]any{"path": "mine/big.md", "content": strings.Repeat("x", 1<<20+1)}, "over the 1048576-byte cap"},
		{ToolEdit, map[string]any{"path": "mine/none.md", "old_text": "a", "new_text": "b"}, "no such file"},
		{ToolEdit, map[string]any{"path": "index.jsonl", "old_text": "a", "new_text": "b"}, "EROFS"},
		{ToolEdit, map[string]any{"path": "mine/idx", "old_text": "a", "new_text": "b"}, "leads outside the memory"},
		{ToolCheck, map[string]any{"path": "episodes"}, "mine/ only"},
	}
	for _, tc := range tests {
		res := call(t, cs, tc.tool, tc.args)
		if !res.IsError {
			t.Errorf("%s %.80v: not an error: %.200s", tc.tool, tc.args, texts(res))
			continue
		}
		if !strings.Contains(texts(res), tc.want) {
			t.Errorf("%s %.80v: error %q does not say %q", tc.tool, tc.args, texts(res), tc.want)
		}
	}
	if diff := diffTrees(before, treeHash(t, s.Root)); diff != "" {
		t.Errorf("refused calls changed the store: %s", diff)
	}
	if diff := diffTrees(beforeOut, treeHash(t, outside)); diff != "" {
		t.Errorf("refused calls changed the outside directory: %s", diff)
	}
	// A file in mine/ whose name looks like a view is a file, as in the mount.
	call(t, cs, ToolWrite, map[string]any{"path": "mine/x@zoom=2.png", "content": "not a view"})
	res := call(t, cs, ToolRead, map[string]any{"path": "mine/x@zoom=2.png"})
	if imgs := images(res); res.IsError || len(imgs) != 1 || string(imgs[0].Data) != "not a view" {
		t.Errorf("mine/x@zoom=2.png is not served as the file: %s", texts(res))
	}
	// Symlinks that stay inside the memory work as through the mount.
	res = call(t, cs, ToolRead, map[string]any{"path": "mine/idx", "limit": 1})
	if res.IsError || !strings.HasPrefix(texts(res), `{"action_kind"`) {
		t.Errorf("mine/idx -> ../index.jsonl: %s", texts(res))
	}
}

func diffTrees(a, b map[string]string) string {
	var d []string
	for k, v := range a {
		if w, ok := b[k]; !ok {
			d = append(d, "removed "+k)
		} else if w != v {
			d = append(d, "changed "+k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			d = append(d, "added "+k)
		}
	}
	return strings.Join(d, ", ")
}

func TestReadOnlyRun(t *testing.T) {
	cs, s := newTestServer(t, func(c *Config) { c.ReadOnly = true })
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{ToolWrite, map[string]any{"path": "mine/notes.md", "content": "x"}},
		{ToolEdit, map[string]any{"path": "mine/notes.md", "old_text": "a", "new_text": "b"}},
	} {
		res := call(t, cs, tc.tool, tc.args)
		if !res.IsError || !strings.Contains(texts(res), "--read-only") {
			t.Errorf("%s in a read-only run: %v %s", tc.tool, res.IsError, texts(res))
		}
	}
	if _, err := os.Stat(s.Path("mine/notes.md")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a read-only run wrote mine/notes.md: %v", err)
	}
}

// panicQuerier stands in for a hook with a bug.
type panicQuerier struct{}

func (panicQuerier) Query(context.Context, string) ([][]byte, []string, error) { panic("bug") }
func (panicQuerier) Grammar() string                                           { return query.Grammar() }

func TestPanicIsAToolError(t *testing.T) {
	cs, _ := newTestServer(t, func(c *Config) { c.Hooks.Querier = panicQuerier{} })
	res := call(t, cs, ToolQuery, map[string]any{"query": "tag:damage"})
	if !res.IsError || !strings.Contains(texts(res), "internal error") || !strings.Contains(texts(res), "bug") {
		t.Fatalf("a panicking hook: %v %s", res.IsError, texts(res))
	}
	res = call(t, cs, ToolRead, map[string]any{"path": "index.jsonl", "limit": 1})
	if res.IsError {
		t.Fatalf("the session did not survive the panic: %s", texts(res))
	}
}

func TestResourcesAndPrompt(t *testing.T) {
	cs, _ := newTestServer(t, nil)
	ctx := context.Background()
	rs, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range rs.Resources {
		uris = append(uris, r.URI)
	}
	if strings.Join(uris, " ") != "mfm://README.md mfm://brief/AGENTS.md" {
		t.Fatalf("resources %v", uris)
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: readmeURI})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rr.Contents[0].Text, "# Your memory (MFM)") || !strings.Contains(rr.Contents[0].Text, "250 episodes in this life (`ep_000000` … `ep_000249`)") {
		t.Fatalf("README resource:\n%.600s", rr.Contents[0].Text)
	}
	rr, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: briefURI})
	if err != nil || !strings.HasPrefix(rr.Contents[0].Text, "# Your memory is mounted at /mfm") {
		t.Fatalf("brief resource: %v %.100s", err, rr.Contents[0].Text)
	}
	p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "brief"})
	if err != nil {
		t.Fatal(err)
	}
	text := p.Messages[0].Content.(*mcp.TextContent).Text
	if !strings.Contains(text, "# Your memory is mounted at /mfm") || !strings.Contains(text, "read tool") {
		t.Fatalf("prompt:\n%.300s", text)
	}
}
