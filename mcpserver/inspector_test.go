package mcpserver

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// InspectorVersion is the MCP Inspector release .ci/run installs
// (npm @modelcontextprotocol/inspector).
const InspectorVersion = "2.12.0"

// inspector finds the MCP Inspector's command: $MFM_MCP_INSPECTOR, else
// mcp-inspector on PATH. Without it the test is skipped, except under
// CI=true, where it fails.
func inspector(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("MFM_MCP_INSPECTOR"); p != "" {
		return p
	}
	p, err := exec.LookPath("mcp-inspector")
	if err == nil {
		return p
	}
	msg := "the MCP Inspector CLI is not installed (npm install -g @modelcontextprotocol/inspector@" + InspectorVersion + ", as .ci/run does; or set MFM_MCP_INSPECTOR)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// inspectorResult is what the Inspector CLI prints for a tool call.
type inspectorResult struct {
	Content []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Data     string `json:"data"`
		MIMEType string `json:"mimeType"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
	Tools             []struct {
		Name         string          `json:"name"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
	} `json:"tools"`
	Contents []struct {
		URI  string `json:"uri"`
		Text string `json:"text"`
	} `json:"contents"`
	Messages []struct {
		Content struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"messages"`
}

// runInspector runs the Inspector's CLI mode against the server command
// (mfmd mcp on stdio).
func runInspector(t *testing.T, insp string, server []string, args ...string) inspectorResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	argv := append(append([]string{"--cli"}, server...), args...)
	cmd := exec.CommandContext(ctx, insp, argv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var r inspectorResult
	if jerr := json.Unmarshal(stdout.Bytes(), &r); jerr != nil {
		t.Fatalf("inspector %s: %v (run: %v)\nstdout: %.500s\nstderr: %.2000s", strings.Join(args, " "), jerr, err, stdout.String(), stderr.String())
	}
	if err != nil && !r.IsError {
		t.Fatalf("inspector %s: %v\nstderr: %.2000s", strings.Join(args, " "), err, stderr.String())
	}
	return r
}

// TestInspectorCLI drives the stdio server from the official MCP
// Inspector (a real client outside Go): it lists the tools and calls each
// one, images included — act and task in a play session of the
// simulated world — and reads the resources and the prompt.
func TestInspectorCLI(t *testing.T) {
	insp := inspector(t)
	bin := mfmdBinary(t)
	s := copyStore(t)
	server := []string{bin, "mcp", "--store", s.Root}
	list := runInspector(t, insp, server, "--method", "tools/list")
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" || !bytes.Contains(tool.InputSchema, []byte(`"properties"`)) || len(tool.OutputSchema) == 0 {
			t.Errorf("tool %s: description, input or output schema missing", tool.Name)
		}
	}
	if strings.Join(names, " ") != strings.Join(allToolNames, " ") {
		t.Fatalf("inspector lists tools %v, want %v", names, allToolNames)
	}
	tool := func(name string, args ...string) []string {
		out := []string{"--method", "tools/call", "--tool-name", name}
		for _, a := range args {
			out = append(out, "--tool-arg", a)
		}
		return out
	}
	type inspectorCall struct {
		name    string
		args    []string
		isError bool
		text    string // in the text content
		image   bool   // one image content that decodes as PNG
	}
	calls := []inspectorCall{
		{name: "query cue", args: tool(ToolQuery, "query=tag:damage last:2"), text: "ep_000180  steps"},
		{name: "query episodes.py", args: tool(ToolQuery, `episodes_py=["--tag","damage","--last","1"]`), text: "ep_000244  steps 3653-3693"},
		{name: "query sheet", args: tool(ToolQuery, "query=tag:damage", "sheet=true"), text: "4 matches", image: true},
		{name: "read lines", args: tool(ToolRead, "path=logs.txt", "offset=2", "limit=1"), text: "Action 0 | Step 0 | INITIAL STATE\n"},
		{name: "read frame", args: tool(ToolRead, "path=episodes/ep_000044/observation/image.png"), image: true},
		{name: "read outside", args: tool(ToolRead, "path=../../etc/passwd"), isError: true, text: `contains ".."`},
		{name: "view crop zoom", args: tool(ToolView, "path=episodes/ep_000044/observation/image@crop=64,48,128,96@zoom=2.png"), image: true},
		{name: "view map", args: tool(ToolView, "path=map/here.png"), image: true},
		{name: "view bad spelling", args: tool(ToolView, "path=episodes/ep_000044/observation/image@zoom=04.png"), isError: true, text: "image@zoom=4.png"},
		{name: "write", args: tool(ToolWrite, "path=mine/notes.md", "content=- fell off the tower: ep_000044\n"), text: "wrote mine/notes.md"},
		{name: "edit", args: tool(ToolEdit, "path=mine/notes.md", "old_text=fell", "new_text=fell 13 blocks"), text: "1 replacement"},
		{name: "write the record", args: tool(ToolWrite, "path=index.jsonl", "content=x"), isError: true, text: "EROFS"},
		{name: "check", args: tool(ToolCheck), text: "1 citation(s), 0 to missing episodes"},
		{name: "query explain", args: tool(ToolQuery, "query=near:-69,185,22", "explain=true"), text: "written near:-69,22,185 (y second) it would keep 17"},
	}
	run := func(server []string, c inspectorCall) {
		t.Run(c.name, func(t *testing.T) {
			r := runInspector(t, insp, server, c.args...)
			if r.IsError != c.isError {
				t.Fatalf("isError %v, want %v: %+v", r.IsError, c.isError, r.Content)
			}
			var text strings.Builder
			var pngs int
			for _, ct := range r.Content {
				switch ct.Type {
				case "text":
					text.WriteString(ct.Text)
				case "image":
					b, err := base64.StdEncoding.DecodeString(ct.Data)
					if err != nil || ct.MIMEType != "image/png" {
						t.Fatalf("image content: %v, %s", err, ct.MIMEType)
					}
					decodePNG(t, b)
					pngs++
				}
			}
			if !strings.Contains(text.String(), c.text) {
				t.Errorf("text does not contain %q:\n%.600s", c.text, text.String())
			}
			if c.image != (pngs == 1) {
				t.Errorf("%d images, want image=%v", pngs, c.image)
			}
			if !c.isError && len(r.StructuredContent) == 0 {
				t.Errorf("no structured content")
			}
		})
	}
	for _, c := range calls {
		run(server, c)
	}
	if b, err := os.ReadFile(filepath.Join(s.Root, "mine/notes.md")); err != nil || string(b) != "- fell 13 blocks off the tower: ep_000044\n" {
		t.Errorf("mine/notes.md after the inspector's write and edit: %q %v", b, err)
	}
	res := runInspector(t, insp, server, "--method", "resources/read", "--uri", readmeURI)
	if len(res.Contents) != 1 || !strings.Contains(res.Contents[0].Text, "# Your memory (MFM)") {
		t.Errorf("resources/read %s: %+v", readmeURI, res.Contents)
	}
	res = runInspector(t, insp, server, "--method", "prompts/get", "--prompt-name", "brief")
	if len(res.Messages) != 1 || !strings.Contains(res.Messages[0].Content.Text, "# Your memory is mounted at /mfm") {
		t.Errorf("prompts/get brief: %+v", res.Messages)
	}

	// act and task: mfmd mcp finds the session in the store it serves
	playStore := startPlay(t, bin)
	for _, c := range []inspectorCall{
		{name: "task", args: tool(ToolTask), text: "[GOALS] 0 of 3 reached"},
		{name: "act refused", args: tool(ToolAct, "plan=fly x=1"), isError: true, text: `no atom or procedure "fly"`},
		{name: "act", args: tool(ToolAct, "plan=go_to x=5 z=0; mine_ahead", "frame=true"), text: "[EVENT] MILESTONE log reached", image: true},
	} {
		run([]string{bin, "mcp", "--store", playStore}, c)
	}
	// --play-socket is the only socket looked at
	none := filepath.Join(t.TempDir(), "none.sock")
	noSession := []string{bin, "mcp", "--store", s.Root, "--play-socket", none}
	run(noSession, inspectorCall{name: "act without a session", args: tool(ToolAct, "plan=wait"), isError: true,
		text: "(looked for its control socket at " + none + "): start one with mfmd play --task TASK"})
}
