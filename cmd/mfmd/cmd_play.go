package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mfm-project/mfm/consolidate"
	"github.com/mfm-project/mfm/episodes"
	mfmfs "github.com/mfm-project/mfm/fs"
	"github.com/mfm-project/mfm/harness"
	"github.com/mfm-project/mfm/luanti"
	"github.com/mfm-project/mfm/play"
	"github.com/mfm-project/mfm/play/luantiworld"
	"github.com/mfm-project/mfm/task"
)

func init() {
	register(&command{
		name:    "play",
		summary: "play a task: start the game, record into a store, serve mfmd act (and run an agent command per turn)",
		usage:   "--task TASK [--store DIR] [--mount DIR] [--seed N] [--budget STEPS] [--agent-cmd 'CMD'] [--linger DURATION] [--work DIR] [--world luanti|sim] [--consolidate-every N] [--adapt] [--llm-cmd CMD] [--static-k] [--ablate LIST] [--read-only-mine] [--shared postgres://… --objects s3://BUCKET/PREFIX --agent NAME]",
		run:     runPlay,
	})
}

// briefFiles are the names the brief is written under in the work
// directory: BRIEF.md, and AGENTS.md which coding agents read by
// themselves.
var briefFiles = []string{"BRIEF.md", "AGENTS.md"}

func runPlay(args []string, stdout, stderr io.Writer) int {
	c := commands["play"]
	fl := newFlagSet(c, stdout, stderr)
	taskName := fl.String("task", "", "task file, or the name of one in the catalog (tasks/NAME.json) (required)")
	tasksDir := fl.String("tasks", "", "task catalog directory (default: tasks/ found from the current directory up)")
	storeDir := fl.String("store", "", "store to record into, created if needed (default: WORK/store)")
	mnt := fl.String("mount", "", "mount the store here while playing (e.g. /mfm); empty: no mount, the agent reads the store")
	seed := fl.Int64("seed", 0, "world map seed (default: the task's, else the game's)")
	budget := fl.Int("budget", 0, "step budget (default: the task's)")
	agentCmd := fl.String("agent-cmd", "", "run this shell command once per turn: the brief and the turn block on stdin, a plan on stdout (or WORK/actions.json)")
	agentTimeout := fl.Duration("agent-timeout", 10*time.Minute, "with --agent-cmd: the longest one turn of the command may take")
	maxTurns := fl.Int("max-turns", 0, "with --agent-cmd: stop after this many turns (0: until the task ends)")
	work := fl.String("work", ".", "the agent's work directory: the brief is written there as BRIEF.md and AGENTS.md")
	world := fl.String("world", "luanti", "luanti (the real game, headless) or sim (a small simulated world, for trying the loop)")
	linger := fl.Duration("linger", defaultLinger, "after the task ends (done or budget), keep the mount, mine/ and the socket (answering mfmd act that the task has ended) this long for the agent's notes, or until Ctrl-C; 0: stop at once (default with --agent-cmd, whose command gets one notes turn instead)")
	// memory inside the loop (docs/CONSOLIDATE.md, "Inside the play loop")
	consolidateEvery := fl.Int("consolidate-every", 0, "consolidate into the knowledge store mine/knowledge/ after every N turns and at the end of the run (0: off)")
	adapt := fl.Bool("adapt", false, "after a failed call, offer the matching skills and remedies of the knowledge store in the turn block (on when --consolidate-every or --llm-cmd is given)")
	memBudget := fl.Int("memory-budget", consolidate.DefaultOfferBudget, "token budget B of the memory offered in a turn block (eq. 7)")
	llmCmd := fl.String("llm-cmd", "", "after a failed call, ask sh -c CMD (the Adaptor prompt on stdin, JSON on stdout) for a repaired plan suffix, shown checked and never run")
	llmTimeout := fl.Duration("llm-timeout", consolidate.DefaultLLMTimeout, "bound on each --llm-cmd call")
	staticK := fl.Bool("static-k", false, "freeze the knowledge store: read and offered from, never changed (the static-store ablation)")
	sock := fl.String("socket", "", "control socket (default: STORE/.mfm/play.sock, linked from "+defaultPlaySocket()+"; a socket given here is not linked)")
	ablate := fl.String("ablate", "", "switch parts of the memory off (comma-separated): no-observations (frames, observation/, views and now/ hidden on the mount, no [FRAME] in the turn block), flat (no index.jsonl, grid.jsonl, q/, map/), no-procedures (mine/procedures ignored and hidden), direct (no memory: no mount, an empty memory directory)")
	readOnlyMine := fl.Bool("read-only-mine", false, "mount mine/ read-only (the memory stays frozen, as in an evaluation's target runs)")
	sharing := addSharedFlags(fl)
	if code, done := parseFlags(fl, args, stdout); done {
		return code
	}
	lingerSet := false
	fl.Visit(func(f *flag.Flag) { lingerSet = lingerSet || f.Name == "linger" })
	if *agentCmd != "" && !lingerSet {
		*linger = 0
	}
	if *linger < 0 {
		fmt.Fprintf(stderr, "mfmd play: --linger %s: want a duration of 0 or more (e.g. 15m)\n", *linger)
		return 2
	}
	abl, err := parseAblation(*ablate)
	if err != nil {
		fmt.Fprintf(stderr, "mfmd play: %v\n", err)
		return 2
	}
	if abl.Direct && *mnt != "" {
		fmt.Fprintln(stderr, "mfmd play: --ablate direct plays without memory: give no --mount")
		return 2
	}
	if on, err := sharing.on(); err != nil || (on && *mnt == "") {
		if err == nil {
			err = errors.New("sharing memory with other agents needs --mount (they are shown under agents/)")
		}
		fmt.Fprintln(stderr, "mfmd play:", err)
		return 2
	}
	if *taskName == "" || fl.NArg() != 0 {
		fmt.Fprintln(stderr, "mfmd play: need --task TASK and no other arguments")
		fl.Usage()
		return 2
	}
	var dirs []string
	if *tasksDir != "" {
		dirs = append(dirs, *tasksDir)
	} else if d, err := findUp("tasks"); err == nil {
		dirs = append(dirs, d)
	}
	tk, taskFile, err := task.Load(*taskName, dirs...)
	if err != nil {
		return fail(stderr, "play", err)
	}
	workDir, err := filepath.Abs(*work)
	if err != nil {
		return fail(stderr, "play", err)
	}
	if err := os.MkdirAll(workDir, 0o755); err != nil {
		return fail(stderr, "play", err)
	}
	if *storeDir == "" {
		*storeDir = filepath.Join(workDir, "store")
	}
	store, err := episodes.Open(*storeDir)
	if err != nil {
		if store, err = episodes.Init(*storeDir); err != nil {
			return fail(stderr, "play", fmt.Errorf("open or create the store %s: %w", *storeDir, err))
		}
		if err := store.SetAxes(episodes.LuantiAxes); err != nil {
			return fail(stderr, "play", err)
		}
	}
	if *seed == 0 {
		*seed = tk.Seed
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-ctx.Done():
		}
	}()

	rec, err := harness.NewRecorder(store, harness.Options{Frames: true, Task: tk.Instruction, MoveKinds: []string{"go_to", "collect_drops"}})
	if err != nil {
		return fail(stderr, "play", err)
	}
	defer rec.Close()
	w, stopWorld, err := startWorld(ctx, *world, rec, *seed, workDir, tk, stderr)
	if err != nil {
		return fail(stderr, "play", err)
	}
	defer stopWorld()

	mountAt := ""
	unmount := func() {}
	// the mount labels its access log rows with the session's turn
	var session atomic.Pointer[play.Session]
	turnLabel := func() string {
		if s := session.Load(); s != nil {
			return s.TurnLabel()
		}
		return ""
	}
	if *mnt != "" {
		if mountAt, err = filepath.Abs(*mnt); err != nil {
			return fail(stderr, "play", err)
		}
		if err := os.MkdirAll(mountAt, 0o755); err != nil {
			return fail(stderr, "play", err)
		}
		hooks, cites, closeHooks, err := setupHooks(store)
		if err != nil {
			return fail(stderr, "play", err)
		}
		defer closeHooks()
		leave, err := sharing.join(store, &hooks, cites)
		if err != nil {
			return fail(stderr, "play", err)
		}
		defer leave()
		srv, err := mfmfs.Mount(ctx, store, mountAt, mfmfs.Options{Hooks: hooks, Turn: turnLabel, ReadOnly: *readOnlyMine, Ablation: abl.Mount})
		if err != nil {
			return fail(stderr, "play", err)
		}
		unmount = sync.OnceFunc(func() {
			if err := srv.Unmount(); err != nil {
				slog.Warn("play: unmount", "err", err)
			}
			// Wait flushes the access log; a lazily detached mount held
			// open by the agent is not waited for long
			waited := make(chan struct{})
			go func() { srv.Wait(); close(waited) }()
			select {
			case <-waited:
			case <-time.After(5 * time.Second):
				slog.Warn("play: the mount is still held open; its last reads may miss run.json", "mount", mountAt)
			}
		})
		defer unmount()
	}
	opts := play.Options{Task: tk, TaskFile: taskFile, Store: store, World: w, Mount: mountAt, Seed: *seed, Budget: *budget, ConsolidateEvery: *consolidateEvery, NoProcedures: abl.Mount.NoProcedures, NoObservations: abl.Mount.NoObservations, Flat: abl.Mount.Flat, MineFrozen: *readOnlyMine}
	if *consolidateEvery > 0 || *adapt || *llmCmd != "" {
		cfg := consolidate.DefaultConfig()
		cfg.StaticK = *staticK
		l := &consolidate.Loop{Store: store, Config: cfg, Budget: *memBudget}
		if *llmCmd != "" {
			l.LLM = &consolidate.LLM{Cmd: *llmCmd, Timeout: *llmTimeout}
		}
		opts.Adaptor = loopMemory{l}
	}
	sess, err := play.NewSession(opts)
	if err != nil {
		return fail(stderr, "play", err)
	}
	session.Store(sess)
	sockPath := *sock
	if sockPath == "" {
		if sockPath, err = store.MetaPath(play.SocketName); err != nil {
			return fail(stderr, "play", err)
		}
	}
	srv, err := play.Listen(sess, sockPath)
	if err != nil {
		return fail(stderr, "play", err)
	}
	defer srv.Close()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	if *sock == "" {
		if link := linkDefaultSocket(sockPath); link != "" {
			defer os.Remove(link)
		}
	}

	memory := mountAt
	if memory == "" {
		memory = store.Root
	}
	if abl.Direct {
		if memory, err = os.MkdirTemp("", "mfm-play-no-memory-*"); err != nil {
			return fail(stderr, "play", err)
		}
		defer os.RemoveAll(memory)
	}
	brief, err := play.Brief(play.BriefInfo{Task: tk, Atoms: w.Atoms(), RawKeys: w.RawKeys(), Mount: memory, Store: store.Root, Socket: sockPath, Budget: *budget, MineFrozen: *readOnlyMine, SharedAs: sharing.name(),
		Ablation: play.BriefAblation{Flat: abl.Mount.Flat, NoObservations: abl.Mount.NoObservations, NoProcedures: abl.Mount.NoProcedures}})
	if err != nil {
		return fail(stderr, "play", err)
	}
	for _, name := range briefFiles {
		if err := os.WriteFile(filepath.Join(workDir, name), []byte(play.BriefFile(name, brief)), 0o644); err != nil {
			return fail(stderr, "play", fmt.Errorf("write the brief: %w", err))
		}
	}
	fmt.Fprintf(stdout, "Playing task %s (budget %d steps) in %s; recording into %s", tk.Name, sess.Run().Budget, *world, store.Root)
	if mountAt != "" {
		fmt.Fprintf(stdout, ", mounted at %s", mountAt)
	}
	fmt.Fprintf(stdout, ".\nThe brief is %s. Act with: MFM_PLAY_SOCKET=%s mfmd act 'PLAN'\n", filepath.Join(workDir, "BRIEF.md"), sockPath)

	env := append(os.Environ(), "MFM_PLAY_SOCKET="+sockPath, "MFM_STORE="+store.Root, "MFM_MEMORY="+memory, "MFM_MOUNT="+mountAt, "MFM_TASK="+tk.Name, "MFM_WORK="+workDir, "MFM_PLAY_SOURCE=agent-cmd")
	if exe, err := os.Executable(); err == nil {
		env = append(env, "PATH="+filepath.Dir(exe)+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	if *agentCmd != "" {
		reason := driveAgent(ctx, sess, *agentCmd, workDir, env, brief, *agentTimeout, *maxTurns, stderr)
		if reason != "" {
			_ = sess.Stop(reason)
		}
		if t := sess.Termination(); (t == play.EndDone || t == play.EndBudget) && ctx.Err() == nil && !*readOnlyMine {
			notesTurn(ctx, sess, *agentCmd, workDir, env, brief, *agentTimeout, stderr)
		}
	} else {
		select {
		case <-sess.Done():
		case <-ctx.Done():
		}
	}
	if t := sess.Termination(); (t == play.EndDone || t == play.EndBudget) && *linger > 0 && ctx.Err() == nil {
		fmt.Fprintf(stdout, "The task has ended (%s). %s stays for the agent's notes (mfmd act answers that the task has ended) until Ctrl-C or %s (--linger).\n", t, memory, *linger)
		select {
		case <-ctx.Done():
		case <-time.After(*linger):
		}
	}
	if sess.Termination() == play.EndRunning {
		_ = sess.Stop(play.EndInterrupted)
	}
	cancel()
	<-served
	// unmounting flushes the access log: run.json gets the last reads
	unmount()
	if err := sess.Flush(); err != nil {
		slog.Warn("play: run.json", "err", err)
	}
	run := sess.Run()
	reached := 0
	for _, m := range run.Milestones {
		if m.Reached {
			reached++
		}
	}
	fmt.Fprintf(stdout, "Run ended: %s. %d of %d milestones, %d steps of %d, %d turns, %.1f s. See %s\n", run.Termination, reached, len(run.Milestones), run.StepsUsed, run.Budget, len(run.Turns), run.WallSeconds, play.RunPath(store))
	if run.Termination == play.EndWorldError {
		return 1
	}
	return 0
}

// startWorld starts the world the session plays in, the player holding
// the task's start kit: the game's mod gives the kit (and only it) when
// the player joins, checked against the logged inventory; the sim world
// is given it after start.
func startWorld(ctx context.Context, kind string, rec *harness.Recorder, seed int64, workDir string, tk *task.Task, stderr io.Writer) (play.World, func(), error) {
	switch kind {
	case "sim":
		w, err := play.NewSimWorld(rec)
		if err == nil {
			err = giveKit(w, tk, stderr)
		}
		return w, func() {}, err
	case "luanti":
	default:
		return nil, nil, fmt.Errorf("--world %q: want luanti or sim", kind)
	}
	if err := luanti.Available(); err != nil {
		return nil, nil, err
	}
	if seed == 0 {
		seed = luanti.DefaultSeed
	}
	gameDir, err := os.MkdirTemp("", "mfm-play-game-*")
	if err != nil {
		return nil, nil, err
	}
	var g *luanti.Game
	for try := 1; ; try++ {
		g, err = luanti.Start(ctx, luanti.Config{Dir: filepath.Join(gameDir, fmt.Sprintf("try%d", try)), Seed: seed, StartKit: luantiworld.KitItems(tk.StartKit), Nice: 5})
		if err == nil || try == 3 || ctx.Err() != nil {
			break
		}
		slog.Warn("play: the game did not start, retrying", "try", try, "err", err)
	}
	if err != nil {
		os.RemoveAll(gameDir)
		return nil, nil, err
	}
	stop := func() { g.Stop(); os.RemoveAll(gameDir) }
	c, err := luanti.NewController(g, rec)
	if err == nil {
		if last, ok := rec.Last(); ok {
			c.Step = last.Step // a store with episodes: a new world, the step counter goes on
		}
		c.Ctx = ctx
		err = c.Calibrate()
	}
	if err == nil {
		err = luantiworld.CheckKit(c.State(c.Cur), tk.StartKit)
	}
	if err == nil && rec.NextID() == "ep_000000" {
		err = c.Initial()
	}
	if err != nil {
		stop()
		return nil, nil, err
	}
	return luantiworld.New(c), stop, nil
}

// giveKit puts the task's start kit into the inventory when the world
// can; otherwise it says the kit is not applied.
func giveKit(w play.World, tk *task.Task, stderr io.Writer) error {
	if len(tk.StartKit) == 0 {
		return nil
	}
	g, ok := w.(play.KitGiver)
	if !ok {
		fmt.Fprintf(stderr, "mfmd play: this world cannot give a start kit; the task's start_kit %v is not applied\n", tk.StartKit)
		return nil
	}
	if err := g.GiveKit(tk.StartKit); err != nil {
		return fmt.Errorf("give the start kit: %w", err)
	}
	return nil
}

// linkDefaultSocket points the default socket link at path, unless a
// live session holds it; it returns the link made ("" for none).
func linkDefaultSocket(path string) string {
	link := defaultPlaySocket()
	if _, err := play.Call(link, play.Request{Op: "block"}, 2*time.Second); err == nil {
		slog.Warn("play: another session answers on the default socket; use MFM_PLAY_SOCKET", "socket", link)
		return ""
	}
	_ = os.Remove(link)
	if err := os.Symlink(path, link); err != nil {
		slog.Warn("play: link the default socket", "err", err)
		return ""
	}
	return link
}

// driveAgent runs the agent command once per turn until the run ends,
// ctx ends, or the agent stops giving plans. It returns a termination
// reason when it stopped the run itself ("" otherwise).
func driveAgent(ctx context.Context, sess *play.Session, cmdline, workDir string, env []string, brief string, timeout time.Duration, maxTurns int, stderr io.Writer) string {
	last := sess.Status()
	idle, refused := 0, 0
	actions := filepath.Join(workDir, "actions.json")
	for turn := 1; sess.Termination() == play.EndRunning && ctx.Err() == nil; turn++ {
		if maxTurns > 0 && turn > maxTurns {
			return "max-turns"
		}
		before := len(sess.Run().Turns)
		refusedBefore, _ := sess.Refusals()
		_ = os.Remove(actions)
		input := brief + "\n\n# Turn\n\n" + last + "\nReply with a plan (or write ./actions.json).\n"
		out, err := runAgentOnce(ctx, cmdline, workDir, env, input, timeout)
		if err != nil {
			fmt.Fprintf(stderr, "mfmd play: agent command, turn %d: %v\n", turn, err)
		}
		plan := strings.TrimSpace(out)
		if plan == "" {
			if b, rerr := os.ReadFile(actions); rerr == nil {
				plan = strings.TrimSpace(string(b))
			}
		}
		if plan == "" {
			if len(sess.Run().Turns) > before {
				// the agent acted itself with mfmd act
				idle, refused, last = 0, 0, sess.LastBlock()
				continue
			}
			if n, why := sess.Refusals(); n > refusedBefore {
				// it ran mfmd act, and its plans were refused
				if refused++; refused >= 5 {
					return "agent-refused"
				}
				last = "[ERROR] your plan was refused, nothing was done: " + why + "\n" + sess.Status()
				continue
			}
			idle++
			if idle >= 3 {
				return "agent-idle"
			}
			last = "[ERROR] no plan: print a plan on stdout, write ./actions.json, or run mfmd act\n" + sess.Status()
			continue
		}
		idle = 0
		block, _, err := sess.Act(ctx, plan, "agent-cmd")
		var pe *play.PlanError
		switch {
		case errors.As(err, &pe):
			refused++
			if refused >= 5 {
				return "agent-refused"
			}
			last = "[ERROR] your plan was refused, nothing was done: " + err.Error() + "\n" + sess.Status()
		case err != nil:
			fmt.Fprintf(stderr, "mfmd play: %v\n", err)
			return ""
		default:
			refused = 0
			last = block
		}
	}
	return ""
}

// defaultLinger is how long an agent-driven play keeps the memory after
// the task ends: time for a coding agent to read the last turn block and
// write its notes.
const defaultLinger = 15 * time.Minute

// notesTurn runs the agent command once more after the task ended, with
// the last turn block and the request to write its notes; a plan it
// prints is not run.
func notesTurn(ctx context.Context, sess *play.Session, cmdline, workDir string, env []string, brief string, timeout time.Duration, stderr io.Writer) {
	input := brief + "\n\n# Turn\n\n" + sess.LastBlock() + "\nThe task has ended: write your notes in mine/ now. No plan is run any more.\n"
	if _, err := runAgentOnce(ctx, cmdline, workDir, append(env, "MFM_PLAY_ENDED="+sess.Termination()), input, timeout); err != nil {
		fmt.Fprintf(stderr, "mfmd play: agent command, notes turn: %v\n", err)
	}
}

// runAgentOnce runs the command with input on stdin and returns its
// stdout (at most 1 MiB).
func runAgentOnce(ctx context.Context, cmdline, dir string, env []string, input string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", cmdline)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin = strings.NewReader(input)
	var out bytes.Buffer
	cmd.Stdout = &limitedBuffer{b: &out, n: 1 << 20}
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	return out.String(), err
}

type limitedBuffer struct {
	b *bytes.Buffer
	n int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.n - l.b.Len(); room > 0 {
		if len(p) > room {
			l.b.Write(p[:room])
		} else {
			l.b.Write(p)
		}
	}
	return len(p), nil
}
