// Package luanti is a real game harness for MFM: it starts Luanti
// (Minetest 5.6, package minetest) headless under Xvfb with a world mod that
// logs the player's state as JSON lines, drives it with real keyboard and
// mouse input through XTEST, captures frames from the X window, and records
// every closed-loop atom call as an episode through harness.Recorder.
//
// It does not implement the store, the mount or queries; see docs/LUANTI.md.
package luanti

import (
	"bufio"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

//go:embed mod/mfm_state/*
var modFS embed.FS

// Binary is the game binary Debian's minetest package installs.
const Binary = "/usr/games/minetest"

// DefaultSeed is the map seed the harness uses: with mapgen v7 the player
// spawns in a deciduous forest (apple trees, a slope, open sky near by).
const DefaultSeed = 5

// Config configures a game.
type Config struct {
	// Dir is a scratch directory for the world, config and logs (required).
	Dir string
	// Seed is the map seed (default 5: spawn in a deciduous forest, mapgen v7).
	Seed int64
	// Width, Height are the window size (default 640x360, the paper's
	// frame size: the frames).
	Width, Height int
	// StartTimeout bounds start-up (default 60 s).
	StartTimeout time.Duration
	// StartKit is the new player's inventory, item strings such as
	// "default:tree 3" (nil: tools, dirt, apples and torches; empty:
	// nothing).
	StartKit []string
	// ExportGraph makes the mod write the game's task-state graph (items
	// and recipes) to <world>/mfm_graph.json at start (see Game.Graph).
	ExportGraph bool
	// Nice is added to the game's and Xvfb's niceness (default 0).
	Nice int
	// Logger gets diagnostics (default slog.Default()).
	Logger *slog.Logger
}

// Game is a running headless Luanti: Xvfb, the game process and its state log.
type Game struct {
	cfg     Config
	Display string
	X       *X
	xvfb    *exec.Cmd
	// xvfbDone is closed when Xvfb exits.
	xvfbDone chan struct{}
	game     *exec.Cmd
	done     chan struct{} // closed when the game process exits
	waitErr  error

	mu     sync.Mutex
	cond   *sync.Cond
	latest *Raw
	events []Event
	lines  int64
	closed bool
	cmdID  int64
}

// Available reports whether the game and Xvfb are installed.
func Available() error {
	for _, b := range []string{Binary, "Xvfb"} {
		if _, err := exec.LookPath(b); err != nil {
			return fmt.Errorf("%s not found (apt-get install minetest minetest-data xvfb xauth libgl1-mesa-dri): %w", b, err)
		}
	}
	return nil
}

// Start starts Xvfb on a free display, writes the config and a world with
// the state mod, starts the game and waits until it is ready: the first
// state line has arrived and the game window is found and focused.
func Start(ctx context.Context, cfg Config) (*Game, error) {
	if cfg.Seed == 0 {
		cfg.Seed = DefaultSeed
	}
	if cfg.Width == 0 {
		cfg.Width, cfg.Height = 640, 360
	}
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = 60 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if err := Available(); err != nil {
		return nil, err
	}
	g := &Game{cfg: cfg, done: make(chan struct{})}
	g.cond = sync.NewCond(&g.mu)
	ctx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()
	if err := g.start(ctx); err != nil {
		g.Stop()
		return nil, err
	}
	return g, nil
}

func (g *Game) start(ctx context.Context) error {
	world := filepath.Join(g.cfg.Dir, "world")
	if err := writeWorld(world); err != nil {
		return err
	}
	conf := filepath.Join(g.cfg.Dir, "minetest.conf")
	if err := os.WriteFile(conf, []byte(configText(g.cfg)), 0o644); err != nil {
		return fmt.Errorf("write game config: %w", err)
	}
	if err := g.startXvfb(ctx); err != nil {
		return err
	}
	port, err := freeUDPPort()
	if err != nil {
		return err
	}
	logf, err := os.Create(filepath.Join(g.cfg.Dir, "minetest.log"))
	if err != nil {
		return fmt.Errorf("game log: %w", err)
	}
	cmd := exec.Command(Binary, "--config", conf, "--world", world, "--go", "--name", "agent", "--password", "", "--port", strconv.Itoa(port))
	cmd.Dir = g.cfg.Dir
	cmd.Env = append(os.Environ(), "DISPLAY="+g.Display, "LIBGL_ALWAYS_SOFTWARE=1", "HOME="+g.cfg.Dir)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start %s: %w", Binary, err)
	}
	g.game = cmd
	renice(cmd.Process.Pid, g.cfg.Nice)
	go func() { g.waitErr = cmd.Wait(); logf.Close(); close(g.done) }()
	g.cfg.Logger.Info("luanti: game started", "pid", cmd.Process.Pid, "display", g.Display, "port", port)

	statePath := filepath.Join(world, "mfm_state.jsonl")
	go g.tail(statePath)
	// Readiness: a first state line, then the window.
	// The mod reports ready once the player stands on the spawn it chose
	// (ground under open sky, after the area is generated).
	for {
		g.mu.Lock()
		ready := g.latest != nil && g.latest.Ready
		g.mu.Unlock()
		if ready {
			break
		}
		if err := g.waitTick(ctx, "the player to stand at the spawn"); err != nil {
			return err
		}
	}
	g.mu.Lock()
	g.cfg.Logger.Info("luanti: "+g.latest.Spawn, "biome", g.latest.Biome)
	g.mu.Unlock()
	x, err := DialX(g.Display)
	if err != nil {
		return err
	}
	g.X = x
	for {
		err := x.FindWindow("Minetest")
		if err == nil {
			break
		}
		if werr := g.waitTick(ctx, "the game window"); werr != nil {
			return fmt.Errorf("%w (last: %v)", werr, err)
		}
	}
	return nil
}

// waitTick sleeps 100 ms, failing when ctx ends or the game exited.
func (g *Game) waitTick(ctx context.Context, what string) error {
	select {
	case <-ctx.Done():
		return fmt.Errorf("luanti: waiting for %s: %w (see %s)", what, ctx.Err(), filepath.Join(g.cfg.Dir, "minetest.log"))
	case <-g.done:
		return fmt.Errorf("luanti: game exited while waiting for %s: %v (see %s)", what, g.waitErr, filepath.Join(g.cfg.Dir, "minetest.log"))
	case <-time.After(100 * time.Millisecond):
		return nil
	}
}

// startXvfb starts Xvfb on a display it picks itself: with -displayfd it
// takes the first display whose socket it can bind (an atomic choice
// between concurrent starts, blind to lock files left by servers that
// were killed) and writes the number when it accepts connections.
func (g *Game) startXvfb(ctx context.Context) error {
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("start Xvfb: %w", err)
	}
	defer r.Close()
	logPath := filepath.Join(g.cfg.Dir, "xvfb.log")
	logf, err := os.Create(logPath)
	if err != nil {
		w.Close()
		return fmt.Errorf("Xvfb log: %w", err)
	}
	cmd := exec.Command("Xvfb", "-displayfd", "3", "-screen", "0", fmt.Sprintf("%dx%dx24", g.cfg.Width, g.cfg.Height), "-nolisten", "tcp")
	cmd.ExtraFiles = []*os.File{w} // fd 3
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	err = cmd.Start()
	w.Close()
	if err != nil {
		logf.Close()
		return fmt.Errorf("start Xvfb: %w", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); logf.Close(); close(exited) }()
	g.xvfb, g.xvfbDone = cmd, exited // stopped by Stop whatever happens next
	named := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n') // EOF when Xvfb exits
		named <- strings.TrimSpace(line)
	}()
	select {
	case n := <-named:
		if _, err := strconv.Atoi(n); err != nil {
			return fmt.Errorf("start Xvfb: it exited without naming a display (see %s)", logPath)
		}
		g.Display = ":" + n
		renice(cmd.Process.Pid, g.cfg.Nice)
		return nil
	case <-ctx.Done():
		return fmt.Errorf("start Xvfb: %w (see %s)", ctx.Err(), logPath)
	}
}

func renice(pid, n int) {
	if n != 0 {
		_ = syscall.Setpriority(syscall.PRIO_PROCESS, pid, n)
	}
}

func freeUDPPort() (int, error) {
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free UDP port: %w", err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port, nil
}

// tail follows the state log and keeps the latest line and pending events.
func (g *Game) tail(path string) {
	var f *os.File
	for {
		var err error
		if f, err = os.Open(path); err == nil {
			break
		}
		select {
		case <-g.done:
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
	defer f.Close()
	rd := bufio.NewReader(f)
	var buf []byte
	for {
		chunk, err := rd.ReadBytes('\n')
		buf = append(buf, chunk...)
		if err != nil {
			g.mu.Lock()
			closed := g.closed
			g.mu.Unlock()
			if closed {
				return
			}
			select {
			case <-g.done:
				g.mu.Lock()
				g.closed = true
				g.cond.Broadcast()
				g.mu.Unlock()
				return
			case <-time.After(10 * time.Millisecond):
			}
			continue
		}
		line := buf
		buf = nil
		var r Raw
		if err := json.Unmarshal(line, &r); err != nil {
			g.cfg.Logger.Warn("luanti: bad state line", "err", err)
			continue
		}
		g.mu.Lock()
		g.latest = &r
		g.events = append(g.events, r.Events...)
		g.lines++
		g.cond.Broadcast()
		g.mu.Unlock()
	}
}

// Next waits for a state line newer than seq (timeout 5 s) and returns it
// with the events logged since the previous call.
func (g *Game) Next(seq float64) (Raw, []Event, error) {
	deadline := time.Now().Add(5 * time.Second)
	g.mu.Lock()
	defer g.mu.Unlock()
	for g.latest == nil || g.latest.Seq <= seq {
		if g.closed {
			return Raw{}, nil, errors.New("luanti: the game has exited")
		}
		if time.Now().After(deadline) {
			return Raw{}, nil, errors.New("luanti: no state line for 5 s")
		}
		g.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
		g.mu.Lock()
	}
	ev := g.events
	g.events = nil
	return *g.latest, ev, nil
}

// Command sends a command to the state mod (appends one JSON line to
// <world>/mfm_cmd.jsonl, which the mod reads every server step) and
// returns its id; the result arrives as an Event of type "cmd" with that
// id in a later state line.
func (g *Game) Command(name string, fields map[string]any) (int64, error) {
	g.mu.Lock()
	g.cmdID++
	id := g.cmdID
	g.mu.Unlock()
	m := map[string]any{}
	for k, v := range fields {
		m[k] = v
	}
	m["id"], m["cmd"] = id, name
	b, err := json.Marshal(m)
	if err != nil {
		return 0, fmt.Errorf("luanti: encode command %s: %w", name, err)
	}
	f, err := os.OpenFile(filepath.Join(g.cfg.Dir, "world", "mfm_cmd.jsonl"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return 0, fmt.Errorf("luanti: command %s: %w", name, err)
	}
	defer f.Close()
	if _, err := f.Write(append(b, '\n')); err != nil {
		return 0, fmt.Errorf("luanti: command %s: %w", name, err)
	}
	return id, nil
}

// Lines is the number of state lines read.
func (g *Game) Lines() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.lines
}

// Stop ends the game and Xvfb (SIGTERM, then SIGKILL after 3 s) and waits.
func (g *Game) Stop() {
	if g.X != nil {
		g.X.Close()
		g.X = nil
	}
	if g.game != nil && g.game.Process != nil {
		stopGroup(g.game, g.done)
		g.game = nil
	}
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	if g.xvfb != nil && g.xvfb.Process != nil {
		stopGroup(g.xvfb, g.xvfbDone) // SIGTERM lets Xvfb remove its socket
		g.xvfb = nil
	}
}

// stopGroup ends the process group cmd leads: SIGTERM, then SIGKILL if
// it has not exited (done closed) after 3 s. It returns once it has.
func stopGroup(cmd *exec.Cmd, done <-chan struct{}) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

func writeWorld(dir string) error {
	mods := filepath.Join(dir, "worldmods", "mfm_state")
	if err := os.MkdirAll(mods, 0o755); err != nil {
		return fmt.Errorf("create world: %w", err)
	}
	err := fs.WalkDir(modFS, "mod/mfm_state", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := modFS.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(mods, filepath.Base(p)), b, 0o644)
	})
	if err != nil {
		return fmt.Errorf("write state mod: %w", err)
	}
	mt := "gameid = minetest_game\nbackend = sqlite3\nplayer_backend = sqlite3\nauth_backend = sqlite3\n"
	if err := os.WriteFile(filepath.Join(dir, "world.mt"), []byte(mt), 0o644); err != nil {
		return fmt.Errorf("write world.mt: %w", err)
	}
	return nil
}

func configText(c Config) string {
	return fmt.Sprintf(`enable_sound = false
mute_sound = true
screen_w = %d
screen_h = %d
fps_max = 20
fps_max_unfocused = 20
viewing_range = 40
enable_clouds = false
smooth_lighting = false
enable_shaders = false
pause_on_lost_focus = false
enable_minimap = false
show_debug = false
menu_clouds = false
enable_damage = true
creative_mode = false
fixed_map_seed = %d
mg_name = v7
server_announce = false
hud_scaling = %g
gui_scaling = %g
mouse_sensitivity = 0.2
doubletap_jump = false
time_speed = 72
`, c.Width, c.Height, c.Seed, hudScale(c.Height), hudScale(c.Height)) + kitSetting(c.StartKit) + fmt.Sprintf("mfm_export_graph = %v\n", c.ExportGraph)
}

// hudScale scales the HUD and GUI with the window height so the whole
// HUD (hearts above the hotbar, one hotbar row) and the inventory window
// fit: 0.4 at 192 rows, 0.75 at 360.
func hudScale(height int) float64 {
	return math.Round(float64(height)/480*100) / 100
}

// kitSetting is the mod's start kit setting (none: the mod's default kit).
func kitSetting(kit []string) string {
	if kit == nil {
		return ""
	}
	return "mfm_start_kit = " + strings.Join(kit, ",") + "\n"
}
