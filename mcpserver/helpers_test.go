package mcpserver

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mfm-project/mfm/consolidate"
	"github.com/mfm-project/mfm/episodes"
	mfmfs "github.com/mfm-project/mfm/fs"
	"github.com/mfm-project/mfm/harness"
	"github.com/mfm-project/mfm/index"
	"github.com/mfm-project/mfm/view"
)

// forestStore is the committed Luanti run the tests serve (250 episodes).
const forestStore = "../examples/runs/luanti-forest/store"

// copyStore copies the committed run into a temporary directory with an
// empty mine/, so tests may write.
func copyStore(t testing.TB) *episodes.Store {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "store")
	err := filepath.WalkDir(forestStore, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(forestStore, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatalf("copy store: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(dst, "mine"), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := episodes.Open(dst)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	return s
}

// testHooks are the mount's services as cmd/mfmd wires them, with the
// linear Scan for queries.
func testHooks(t testing.TB, s *episodes.Store) mfmfs.Hooks {
	t.Helper()
	v, err := view.New(s, view.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	res := &consolidate.Resolver{Store: s}
	return mfmfs.Hooks{
		Querier:          &index.Querier{Searcher: index.Scan{Store: s}, Cites: res.InMine()},
		Viewer:           v,
		CitedBy:          func(ctx context.Context, dir string) ([]byte, error) { return res.CitedBy(dir) },
		ProcedureCatalog: harness.CatalogFunc(s),
		Explain: func(ctx context.Context, q string) ([]byte, error) {
			return index.Explain(ctx, s, q, res.InMine())
		},
		Check: func(ctx context.Context) ([]byte, error) {
			r, err := consolidate.Check(s, res)
			if err != nil {
				return nil, err
			}
			return r.Text(), nil
		},
	}
}

// connect serves cfg in process and returns a connected client session.
func connect(t testing.TB, cfg Config) *mcp.ClientSession {
	t.Helper()
	srv, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatalf("server connect: %v", err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatalf("client connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// newTestServer serves a fresh copy of the committed run in process.
func newTestServer(t testing.TB, mod func(*Config)) (*mcp.ClientSession, *episodes.Store) {
	t.Helper()
	s := copyStore(t)
	cfg := Config{Store: s, Hooks: testHooks(t, s), Renderer: view.NewFiles(view.DefaultLimits())}
	if mod != nil {
		mod(&cfg)
	}
	return connect(t, cfg), s
}

// call calls a tool; a protocol error fails the test.
func call(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: protocol error: %v", name, args, err)
	}
	return res
}

// texts joins a result's text contents.
func texts(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// images returns a result's image contents.
func images(res *mcp.CallToolResult) []*mcp.ImageContent {
	var out []*mcp.ImageContent
	for _, c := range res.Content {
		if ic, ok := c.(*mcp.ImageContent); ok {
			out = append(out, ic)
		}
	}
	return out
}

// structured decodes a result's structured content into v.
func structured(t testing.TB, res *mcp.CallToolResult, v any) {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
}
