package mcpserver

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// mfmdBinary builds cmd/mfmd once per test run and returns its path.
func mfmdBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mfmd-mcp-test-")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "mfmd")
		out, err := exec.Command("go", "build", "-o", builtBin, "github.com/mfm-project/mfm/cmd/mfmd").CombinedOutput()
		if err != nil {
			buildErr = &buildError{out: string(out), err: err}
		}
	})
	if buildErr != nil {
		t.Fatalf("build mfmd: %v", buildErr)
	}
	return builtBin
}

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return e.err.Error() + ": " + e.out }

// allToolNames are the tools mfmd mcp serves.
var allToolNames = []string{ToolAct, ToolCheck, ToolEdit, ToolQuery, ToolRead, ToolTask, ToolView, ToolWrite}

// exerciseServer lists the tools and calls each one through cs, as a
// client of the real binary would.
func exerciseServer(t *testing.T, cs *mcp.ClientSession, storeRoot string) {
	ctx := context.Background()
	tl, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("list tools: %v", err)
	}
	var names []string
	for _, tool := range tl.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" || tool.InputSchema == nil {
			t.Errorf("tool %s has no description or schema", tool.Name)
		}
	}
	if strings.Join(names, " ") != strings.Join(allToolNames, " ") {
		t.Fatalf("tools %v, want %v", names, allToolNames)
	}
	// mfmd mcp serves the mount's trees and generated files too.
	for path, want := range map[string]string{
		"":                         "consolidate/\n",
		"consolidate":              "digest.md\n",
		"mine/procedures/.catalog": `"procedures"`,
	} {
		res := call(t, cs, ToolRead, map[string]any{"path": path})
		if res.IsError || !strings.Contains(texts(res), want) {
			t.Errorf("read %q: %s; want %q in it", path, texts(res), want)
		}
	}
	res := call(t, cs, ToolQuery, map[string]any{"query": "tag:damage"})
	var q QueryOutput
	structured(t, res, &q)
	if res.IsError || q.Count != 4 || q.Rows[0].Dir != "episodes/ep_000044" {
		t.Errorf("query tag:damage: %+v %s", q, texts(res))
	}
	res = call(t, cs, ToolRead, map[string]any{"path": "episodes/ep_000044/outcome.json"})
	if res.IsError || !strings.Contains(texts(res), `"damage": 10.0`) {
		t.Errorf("read outcome.json: %s", texts(res))
	}
	res = call(t, cs, ToolRead, map[string]any{"path": "episodes/ep_000044/observation/image.png"})
	if imgs := images(res); res.IsError || len(imgs) != 1 {
		t.Errorf("read a frame: %s", texts(res))
	} else {
		decodePNG(t, imgs[0].Data)
	}
	res = call(t, cs, ToolView, map[string]any{"path": "episodes/ep_000044/observation/image@crop=64,48,128,96@zoom=2.png"})
	if imgs := images(res); res.IsError || len(imgs) != 1 {
		t.Errorf("view: %s", texts(res))
	} else if w, h := decodePNG(t, imgs[0].Data); w != 256 || h != 192 {
		t.Errorf("view size %dx%d, want 256x192", w, h)
	}
	res = call(t, cs, ToolWrite, map[string]any{"path": "mine/notes.md", "content": "- hurt falling off the tower: ep_000044\n"})
	if res.IsError {
		t.Errorf("write: %s", texts(res))
	}
	res = call(t, cs, ToolEdit, map[string]any{"path": "mine/notes.md", "old_text": "ep_000044", "new_text": "ep_000044, ep_999999"})
	if res.IsError {
		t.Errorf("edit: %s", texts(res))
	}
	if b, err := os.ReadFile(filepath.Join(storeRoot, "mine/notes.md")); err != nil || string(b) != "- hurt falling off the tower: ep_000044, ep_999999\n" {
		t.Errorf("mine/notes.md after write and edit: %q %v", b, err)
	}
	res = call(t, cs, ToolCheck, nil)
	var c CheckOutput
	structured(t, res, &c)
	if res.IsError || c.Citations != 2 || len(c.Missing) != 1 || !strings.Contains(c.Missing[0].Text, "ep_999999") {
		t.Errorf("check: %+v %s", c, texts(res))
	}
	res = call(t, cs, ToolWrite, map[string]any{"path": "index.jsonl", "content": "x"})
	if !res.IsError || !strings.Contains(texts(res), "EROFS") {
		t.Errorf("write to the record: %v %s", res.IsError, texts(res))
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: readmeURI})
	if err != nil || !strings.Contains(rr.Contents[0].Text, "250 episodes in this life") {
		t.Errorf("README resource: %v", err)
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "brief"}); err != nil {
		t.Errorf("prompt: %v", err)
	}
}

func TestBinaryStdio(t *testing.T) {
	bin := mfmdBinary(t)
	s := copyStore(t)
	cmd := exec.Command(bin, "mcp", "--store", s.Root)
	cmd.Stderr = os.Stderr
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to mfmd mcp on stdio: %v", err)
	}
	exerciseServer(t, cs, s.Root)
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if cmd.ProcessState == nil || !cmd.ProcessState.Success() {
		t.Errorf("mfmd mcp did not exit cleanly when stdin closed: %v", cmd.ProcessState)
	}
}

// startHTTP runs mfmd mcp --http on a free port and returns its URL.
func startHTTP(t testing.TB, bin, store string) string {
	t.Helper()
	cmd := exec.Command(bin, "mcp", "--store", store, "--http", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("mfmd mcp --http after SIGTERM: %v", err)
			}
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Errorf("mfmd mcp --http did not exit 10 s after SIGTERM")
		}
	})
	addr := regexp.MustCompile(`over MCP at (http://\S+)`)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := addr.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
		exited <- cmd.Wait()
	}()
	select {
	case u := <-found:
		return u
	case <-time.After(time.Minute):
		t.Fatal("mfmd mcp --http printed no address within a minute")
	}
	return ""
}

func TestBinaryHTTP(t *testing.T) {
	bin := mfmdBinary(t)
	s := copyStore(t)
	url := startHTTP(t, bin, s.Root)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatalf("connect to %s: %v", url, err)
	}
	defer cs.Close()
	exerciseServer(t, cs, s.Root)
}
