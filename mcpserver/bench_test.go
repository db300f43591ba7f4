package mcpserver

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mfm-project/mfm/episodes"
)

// BenchmarkCallVsMount times each tool call of mfmd mcp (the built
// binary on stdio, through the SDK's client: one JSON-RPC round trip)
// beside the same operation through mfmd mount of the same store (the
// calls a program makes on the mounted files). bench/mcp.sh runs it and
// prints the ratios; figures are in bench/mcp.md. It needs root and
// /dev/fuse for the mount.
func BenchmarkCallVsMount(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("the mount side needs root")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		b.Skip("the mount side needs /dev/fuse")
	}
	bin := mfmdBinary(b)
	// Each server gets its own copy: the cue index of a store serves one
	// process (the other would scan index.jsonl instead).
	s, ms := copyStore(b), copyStore(b)
	mnt := filepath.Join(b.TempDir(), "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		b.Fatal(err)
	}
	mount := exec.Command(bin, "mount", "--store", ms.Root, "--no-access-log", mnt)
	if err := mount.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		mount.Process.Signal(syscall.SIGINT)
		mount.Wait()
	}()
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := os.Stat(filepath.Join(mnt, "q")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("the mount did not come up within a minute")
		}
		time.Sleep(10 * time.Millisecond) // polling a condition: the mount's root appearing
	}
	ctx := context.Background()
	cmd := exec.Command(bin, "mcp", "--store", s.Root)
	if p := os.Getenv("MFM_MCP_CPUPROFILE"); p != "" {
		cmd.Env = append(os.Environ(), "MFM_CPUPROFILE="+p)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "v0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()

	lines := func(data []byte, from, n int) []byte {
		ls := bytes.SplitAfter(data, []byte("\n"))
		return bytes.Join(ls[from-1:from-1+n], nil)
	}
	ops := []struct {
		name  string
		tool  string
		args  map[string]any
		mount func() error
	}{
		{"read_outcome", ToolRead, map[string]any{"path": "episodes/ep_000044/outcome.json"}, func() error {
			_, err := os.ReadFile(filepath.Join(mnt, "episodes/ep_000044/outcome.json"))
			return err
		}},
		{"read_index_lines_100_119", ToolRead, map[string]any{"path": "index.jsonl", "offset": 100, "limit": 20}, func() error {
			b, err := os.ReadFile(filepath.Join(mnt, "index.jsonl"))
			if err == nil {
				_ = lines(b, 100, 20)
			}
			return err
		}},
		{"read_frame_png", ToolRead, map[string]any{"path": "episodes/ep_000044/observation/image.png"}, func() error {
			_, err := os.ReadFile(filepath.Join(mnt, "episodes/ep_000044/observation/image.png"))
			return err
		}},
		{"view_crop_zoom", ToolView, map[string]any{"path": "episodes/ep_000044/observation/image@crop=64,48,128,96@zoom=2.png"}, func() error {
			_, err := os.ReadFile(filepath.Join(mnt, "episodes/ep_000044/observation/image@crop=64,48,128,96@zoom=2.png"))
			return err
		}},
		{"view_map_here_txt", ToolView, map[string]any{"path": "map/here@r=8.txt"}, func() error {
			_, err := os.ReadFile(filepath.Join(mnt, "map/here@r=8.txt"))
			return err
		}},
		{"query_tag_damage", ToolQuery, map[string]any{"query": "tag:damage"}, func() error {
			_, err := os.ReadFile(filepath.Join(mnt, "q/tag:damage/results.jsonl"))
			return err
		}},
		{"write_mine_atomic", ToolWrite, map[string]any{"path": "mine/bench.md", "content": "- a note citing ep_000044\n"}, func() error {
			return episodes.WriteFileAtomic(filepath.Join(mnt, "mine/bench.md"), []byte("- a note citing ep_000044\n"), 0o644)
		}},
	}
	for _, op := range ops {
		b.Run(op.name+"/mcp", func(b *testing.B) {
			cpu0 := processCPU(b, cmd.Process.Pid)
			for b.Loop() {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: op.tool, Arguments: op.args})
				if err != nil || res.IsError {
					b.Fatalf("%s: %v %s", op.tool, err, texts(res))
				}
			}
			b.ReportMetric(float64(processCPU(b, cmd.Process.Pid)-cpu0)/1e3/float64(b.N), "server-cpu-µs/op")
		})
		b.Run(op.name+"/mount", func(b *testing.B) {
			cpu0 := processCPU(b, mount.Process.Pid)
			for b.Loop() {
				if err := op.mount(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(processCPU(b, mount.Process.Pid)-cpu0)/1e3/float64(b.N), "server-cpu-µs/op")
		})
	}
}

// processCPU is the CPU time, in ns, that process pid's threads have run
// (the sum of /proc/PID/task/*/schedstat), so a benchmark can report a
// daemon's work per operation apart from the host's scheduling delays.
func processCPU(b *testing.B, pid int) int64 {
	b.Helper()
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		b.Fatalf("schedstat of %d: %v", pid, err)
	}
	var sum int64
	for _, t := range tasks {
		data, err := os.ReadFile(t)
		if err != nil {
			continue // the thread exited
		}
		var ns int64
		if _, err := fmt.Sscan(string(data), &ns); err != nil {
			b.Fatalf("%s: %v", t, err)
		}
		sum += ns
	}
	return sum
}

// BenchmarkToolInProcess times tool calls through the SDK's in-memory
// transport: the server's and the SDK's own cost, without a pipe or a
// second process.
func BenchmarkToolInProcess(b *testing.B) {
	cs, _ := newTestServer(b, nil)
	ctx := context.Background()
	for _, op := range []struct {
		name string
		tool string
		args map[string]any
	}{
		{"read_outcome", ToolRead, map[string]any{"path": "episodes/ep_000044/outcome.json"}},
		{"read_frame_png", ToolRead, map[string]any{"path": "episodes/ep_000044/observation/image.png"}},
		{"query_tag_damage_scan", ToolQuery, map[string]any{"query": "tag:damage"}},
	} {
		b.Run(op.name, func(b *testing.B) {
			for b.Loop() {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: op.tool, Arguments: op.args})
				if err != nil || res.IsError {
					b.Fatalf("%s: %v %s", op.tool, err, texts(res))
				}
			}
		})
	}
}
