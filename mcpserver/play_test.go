package mcpserver

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/harness"
	"github.com/mfm-project/mfm/play"
	"github.com/mfm-project/mfm/task"
	"github.com/mfm-project/mfm/view"
)

// simTask is the task the play tests run in the simulated world: a log
// (go_to x=5 z=0; mine_ahead), planks (craft item=wood), sticks, in
// order (the next goal is disclosed once one is reached).
const simTask = `{"name": "sim-log", "instruction": "get a log and craft planks and sticks", "budget": 200, "ordered": true, "milestones": [
	{"name": "log", "when": "tree>=1"}, {"name": "planks", "when": "crafted:wood>=4"}, {"name": "sticks", "when": "stick>=4"}]}`

// startSession runs a play session in the simulated world in process,
// recording into st, serving its control socket at st's .mfm/play.sock
// (where mfmd mcp looks for it).
func startSession(t *testing.T, st *episodes.Store) (*play.Session, string) {
	t.Helper()
	tk, err := task.Parse([]byte(simTask))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := harness.NewRecorder(st, harness.Options{Frames: true, Task: tk.Instruction})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rec.Close() })
	w, err := play.NewSimWorld(rec)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := play.NewSession(play.Options{Task: tk, Store: st, World: w})
	if err != nil {
		t.Fatal(err)
	}
	sock, err := st.MetaPath(play.SocketName)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := play.Listen(sess, sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("play server: %v", err)
		}
		srv.Close()
	})
	return sess, sock
}

// rowCount is the number of episodes in st's current life.
func rowCount(t *testing.T, st *episodes.Store) int {
	t.Helper()
	life, err := st.CurrentLife()
	if err != nil {
		t.Fatal(err)
	}
	rows, err := life.AllRows()
	if err != nil {
		t.Fatal(err)
	}
	return len(rows)
}

// TestActTask plays the simulated world through act and task in process:
// the status and atoms, a turn with its frame, refusals that record
// nothing, the end of the run.
func TestActTask(t *testing.T) {
	st, err := episodes.Init(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	sess, sock := startSession(t, st)
	// the first socket has no session: act and task go on to the next
	none := filepath.Join(t.TempDir(), "none.sock")
	cs := connect(t, Config{Store: st, Hooks: testHooks(t, st), Renderer: view.NewFiles(view.DefaultLimits()), PlaySockets: []string{none, sock}})

	res := call(t, cs, ToolTask, nil)
	var to TaskOutput
	structured(t, res, &to)
	if res.IsError || !strings.Contains(texts(res), "[GOALS] 0 of 3 reached") || !strings.Contains(texts(res), "go_to(x:number, z:number, within:number=1)") {
		t.Fatalf("task: %s", texts(res))
	}
	if to.Status.Task != "sim-log" || to.Status.State != play.EndRunning || to.Status.Budget != 200 || to.Status.StepsUsed != 0 || to.Status.StepsLeft != 200 ||
		len(to.Status.Goals) != 1 || to.Status.Goals[0].Name != "log" || to.Status.Goals[0].Reached || to.Status.Undisclosed != 2 ||
		to.Status.Socket != sock || !strings.Contains(to.Atoms, "mine_ahead()") {
		t.Errorf("task structured: %+v", to)
	}
	res = call(t, cs, ToolTask, map[string]any{"no_atoms": true})
	to = TaskOutput{}
	structured(t, res, &to)
	if res.IsError || strings.Contains(texts(res), "Atoms") || to.Atoms != "" || !strings.Contains(texts(res), "[GOALS] 0 of 3 reached") || to.Status.Task != "sim-log" {
		t.Errorf("task no_atoms: %+v\n%s", to, texts(res))
	}

	n0 := rowCount(t, st)
	res = call(t, cs, ToolAct, map[string]any{"plan": "go_to x=5 z=0; mine_ahead", "frame": true})
	var ao ActOutput
	structured(t, res, &ao)
	if res.IsError || !strings.Contains(texts(res), "[ACTION] mine_ahead() -> ok: broke tree") || !strings.Contains(texts(res), "[EVENT] MILESTONE log reached") {
		t.Fatalf("act: %s", texts(res))
	}
	run := sess.Run()
	life, _ := st.CurrentLife()
	rows, _ := life.AllRows()
	var recorded []string
	for _, r := range rows[n0:] {
		recorded = append(recorded, r.ID)
	}
	if len(recorded) == 0 || strings.Join(ao.Episodes, " ") != strings.Join(recorded, " ") || !strings.Contains(texts(res), "[EPISODES] "+strings.Join(recorded, " ")+"\n") {
		t.Errorf("act episodes %v, recorded %v", ao.Episodes, recorded)
	}
	if ao.Turn != "t0001" || len(ao.Entries) != 2 || ao.Entries[1].Outcome != "ok" || strings.Join(ao.MilestonesReached, ",") != "log" ||
		ao.Status.StepsUsed != run.StepsUsed || ao.Status.StepsLeft != 200-run.StepsUsed || ao.Steps != run.StepsUsed || ao.Status.Turns != 1 ||
		len(ao.Status.Goals) != 2 || !ao.Status.Goals[0].Reached || ao.Status.Goals[0].Turn != "t0001" || ao.Status.Goals[1].Name != "planks" ||
		ao.Status.Goals[1].Reached || ao.Status.Undisclosed != 1 {
		t.Errorf("act structured: %+v (run: %d steps used)", ao, run.StepsUsed)
	}
	if len(run.Turns) != 1 || run.Turns[0].Source != PlaySource {
		t.Errorf("run.json turns: %+v", run.Turns)
	}
	// the frame is a memory path: the attached image is that file, and
	// read serves it too
	if !strings.HasPrefix(ao.Status.Frame, "episodes/"+recorded[len(recorded)-1]+"/") {
		t.Errorf("frame %q is not in the last episode recorded", ao.Status.Frame)
	}
	want, err := os.ReadFile(st.Path(ao.Status.Frame))
	if err != nil {
		t.Fatal(err)
	}
	if imgs := images(res); len(imgs) != 1 || !bytes.Equal(imgs[0].Data, want) || imgs[0].MIMEType != "image/png" {
		t.Errorf("act frame=true: %d images, want the frame %s", len(imgs), ao.Status.Frame)
	} else {
		decodePNG(t, imgs[0].Data)
	}
	if rr := call(t, cs, ToolRead, map[string]any{"path": ao.Status.Frame}); rr.IsError || len(images(rr)) != 1 {
		t.Errorf("read %s: %s", ao.Status.Frame, texts(rr))
	}

	// refusals: a tool error with the session's reason, nothing recorded
	n1 := rowCount(t, st)
	for _, c := range []struct {
		plan string
		err  string
	}{
		{"fly x=1", `no atom or procedure "fly"`},
		{"go_to x=1", "missing z"},
		{"go_to x=900 z=0", "over the cap"},
		{`{"actions": [{"procedure": "nope"}]}`, `"nope"`},
		{"  ", "no plan"},
	} {
		res := call(t, cs, ToolAct, map[string]any{"plan": c.plan})
		if !res.IsError || !strings.Contains(texts(res), c.err) {
			t.Errorf("act %q: isError %v: %s", c.plan, res.IsError, texts(res))
		}
		if strings.TrimSpace(c.plan) != "" && !strings.Contains(texts(res), "plan refused, nothing done or recorded") {
			t.Errorf("act %q: %s", c.plan, texts(res))
		}
	}
	if n := rowCount(t, st); n != n1 || len(sess.Run().Turns) != 1 {
		t.Errorf("refused plans recorded %d episodes, %d turns", n-n1, len(sess.Run().Turns)-1)
	}
	// a plan of the wrong type is refused by the schema
	if res := call(t, cs, ToolAct, map[string]any{"plan": 5}); !res.IsError {
		t.Errorf("act plan=5: %s", texts(res))
	}

	// the rest of the task ends the run; the block and the state say so
	res = call(t, cs, ToolAct, map[string]any{"plan": "craft item=wood; craft item=stick"})
	ao = ActOutput{}
	structured(t, res, &ao)
	if res.IsError || ao.Status.State != play.EndDone || !strings.Contains(texts(res), "[END] every milestone reached") || len(ao.Status.Goals) != 3 || ao.Status.Undisclosed != 0 ||
		strings.Join(ao.MilestonesReached, ",") != "planks,sticks" || len(images(res)) != 0 {
		t.Errorf("last act: %+v\n%s", ao, texts(res))
	}
	res = call(t, cs, ToolAct, map[string]any{"plan": "wait"})
	if !res.IsError || !strings.Contains(texts(res), "the task has ended (done)") {
		t.Errorf("act after the end: %s", texts(res))
	}
	res = call(t, cs, ToolTask, nil)
	to = TaskOutput{}
	structured(t, res, &to)
	if res.IsError || to.Status.State != play.EndDone || to.Status.Turns != 2 {
		t.Errorf("task after the end: %+v %s", to.Status, texts(res))
	}
}

// TestActNoSession: without a session act and task are tool errors that
// say how to start one.
func TestActNoSession(t *testing.T) {
	st, err := episodes.Init(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(t.TempDir(), "stale.sock")
	if err := os.WriteFile(stale, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, socks := range [][]string{nil, {filepath.Join(t.TempDir(), "none.sock"), stale}} {
		cs := connect(t, Config{Store: st, PlaySockets: socks})
		for _, c := range []struct {
			tool string
			args map[string]any
		}{{ToolAct, map[string]any{"plan": "wait"}}, {ToolTask, nil}} {
			res := call(t, cs, c.tool, c.args)
			if !res.IsError || !strings.Contains(texts(res), "no play session is running") || !strings.Contains(texts(res), "mfmd play --task TASK") {
				t.Errorf("%s with sockets %v: %s", c.tool, socks, texts(res))
			}
			for _, s := range socks {
				if !strings.Contains(texts(res), s) {
					t.Errorf("%s: the error does not name the socket %s: %s", c.tool, s, texts(res))
				}
			}
		}
	}
	if n := rowCount(t, st); n != 0 {
		t.Errorf("%d episodes recorded without a session", n)
	}
}

// startPlay runs the built mfmd play in the simulated world with its
// socket at the store's .mfm/play.sock, waits until the session answers,
// and returns the store directory.
func startPlay(t *testing.T, bin string) string {
	t.Helper()
	dir := t.TempDir()
	taskFile := filepath.Join(dir, "sim-log.json")
	if err := os.WriteFile(taskFile, []byte(simTask), 0o644); err != nil {
		t.Fatal(err)
	}
	storeDir := filepath.Join(dir, "store")
	sock := filepath.Join(storeDir, ".mfm", play.SocketName)
	cmd := exec.Command(bin, "play", "--task", taskFile, "--world", "sim", "--work", dir, "--store", storeDir, "--socket", sock)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		select {
		case <-exited:
			return
		default:
		}
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("mfmd play did not exit 10 s after SIGINT")
		}
	})
	deadline := time.After(30 * time.Second)
	for {
		if _, err := play.Call(sock, play.Request{Op: "status"}, time.Second); err == nil {
			return storeDir
		}
		select {
		case err := <-exited:
			t.Fatalf("mfmd play exited (%v) before serving %s:\n%s", err, sock, out.String())
		case <-deadline:
			t.Fatalf("mfmd play served no session on %s within 30 s:\n%s", sock, out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestBinaryActTask drives a session of the built mfmd play through the
// built mfmd mcp on stdio, which finds the session's socket in the store
// it serves.
func TestBinaryActTask(t *testing.T) {
	bin := mfmdBinary(t)
	storeDir := startPlay(t, bin)
	cmd := exec.Command(bin, "mcp", "--store", storeDir)
	cmd.Env = append(os.Environ(), "MFM_PLAY_SOCKET=")
	cmd.Stderr = os.Stderr
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to mfmd mcp on stdio: %v", err)
	}
	defer cs.Close()
	res := call(t, cs, ToolTask, nil)
	if res.IsError || !strings.Contains(texts(res), "[GOALS] 0 of 3 reached") || !strings.Contains(texts(res), "Atoms (closed-loop") {
		t.Fatalf("task: %s", texts(res))
	}
	res = call(t, cs, ToolAct, map[string]any{"plan": "fly"})
	if !res.IsError || !strings.Contains(texts(res), `no atom or procedure "fly"`) {
		t.Errorf("act fly: %s", texts(res))
	}
	res = call(t, cs, ToolAct, map[string]any{"plan": "go_to x=5 z=0; mine_ahead", "frame": true})
	var ao ActOutput
	structured(t, res, &ao)
	if res.IsError || ao.Turn != "t0001" || len(ao.Episodes) == 0 || strings.Join(ao.MilestonesReached, ",") != "log" || len(images(res)) != 1 {
		t.Fatalf("act: %+v\n%s", ao, texts(res))
	}
	st, err := episodes.Open(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	run, err := play.ReadRun(st)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Turns) != 1 || run.Turns[0].Source != PlaySource || run.StepsUsed != ao.Status.StepsUsed {
		t.Errorf("run.json: %d turns, %+v; act said %d steps used", len(run.Turns), run.Turns, ao.Status.StepsUsed)
	}
	// the episodes are in the memory mfmd mcp serves
	if rr := call(t, cs, ToolRead, map[string]any{"path": "episodes/" + ao.Episodes[0] + "/outcome.json"}); rr.IsError {
		t.Errorf("read the new episode: %s", texts(rr))
	}
}

// TestFrameImage: the frame act attaches, or why none is attached.
func TestFrameImage(t *testing.T) {
	dir := t.TempDir()
	png := filepath.Join(dir, "f.png")
	body := []byte("\x89PNG\r\n\x1a\n0123456789")
	if err := os.WriteFile(png, body, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), body, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		file, note string
		max        int
	}{
		{png, "", 1 << 20},
		{"", "no frame yet", 1 << 20},
		{png, "over", 8},
		{filepath.Join(dir, "f.txt"), "not a PNG or JPEG", 1 << 20},
		{filepath.Join(dir, "gone.png"), "no such file", 1 << 20},
	} {
		s := &server{lim: Limits{MaxImageBytes: c.max}}
		img, note := s.frameImage(c.file)
		switch {
		case c.note == "" && (img == nil || !bytes.Equal(img.Data, body) || img.MIMEType != "image/png"):
			t.Errorf("%s: %v %q", c.file, img, note)
		case c.note != "" && (img != nil || !strings.Contains(note, c.note)):
			t.Errorf("%s (max %d): image %v, note %q; want a note with %q", c.file, c.max, img != nil, note, c.note)
		}
	}
}
