package harness

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/png"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/mfm-project/mfm/episodes"
)

// Arg is one named argument of a call; a Call keeps its arguments in the
// order the harness gave them, as the summary prints them.
type Arg struct {
	Name  string
	Value any
}

// Call is what an episode does: a named procedure with arguments
// (go_to(x=3170.5,z=1402.5)) or, when Kind is empty and Raw is set, a
// low-level action repeated ({"attack":1} x24).
type Call struct {
	// Kind is the procedure name (go_to, harvest_tree, …). Empty for a raw
	// action, whose kind is the active keys of Raw joined by "+".
	Kind string
	// Args are the procedure's arguments in call order.
	Args []Arg
	// Raw is a low-level action ({"attack": 1}); used when Kind is empty.
	Raw map[string]any
	// Budget is the planned number of ticks the summary prints as
	// "-> N ticks" (or "xN" for a raw action). 0 means the number of steps
	// actually recorded.
	Budget int64
	// Plan lines go to logs.txt as [PLAN] lines before the [ACTION] line.
	Plan []string
	// Header parts are appended to the log block header
	// ("Action 3 | Step 600 | Plan Step 1/2 | 0/3 verified").
	Header []string
	// Meta holds extra action.json fields (briefing, turn, plan_index, …).
	Meta map[string]any
}

// ActionKind is the index row's action_kind: Kind, or for a raw action the
// keys of Raw with a non-zero value, sorted and joined by "+"
// (forward+jump).
func (c Call) ActionKind() string {
	if c.Kind != "" {
		return c.Kind
	}
	return rawKind(c.Raw)
}

// State is the structured game state after a step (or at the start).
type State struct {
	Step       int64
	X, Y, Z    float64
	Yaw, Pitch float64
	Inventory  map[string]int
	Health     float64
	GUIOpen    bool
	// Milestones are the milestones reached so far (cumulative); new ones
	// in an episode become its milestone transition.
	Milestones []string
	// Extra holds further fields written into state.json as they are
	// (goals, hotbar, mainhand, vitals, …).
	Extra map[string]any
}

// Cell is a grid interaction the harness knows exactly (a block placed, a
// container opened, a wall it walked into, water seen): written as a grid
// row at the step.
type Cell struct {
	X, Y, Z int
	Kind    string // one of CellKinds: placed, opened, blocked, water
	Item    string
}

// Step is one environment step of the current episode.
type Step struct {
	Action any      // the low-level action sent this step (map, string, …)
	State  State    // the state after it
	Events []string // events the environment reported ("mine_block dirt +1")
	Cells  []Cell   // exact grid interactions, if the harness knows them
	// Frame or FramePNG is the observation after the step (optional).
	Frame    image.Image
	FramePNG []byte
}

// Options configure a Recorder.
type Options struct {
	// Frames keeps every step's frame as frames/NNNNNN.png (NNNNNN the
	// step number) and every step's state in steps.jsonl.
	Frames bool
	// Task is printed in the initial log block ("Task: …").
	Task string
	// StuckBelow is the horizontal distance (blocks) under which an
	// episode that attempted to move counts as stuck. Default 0.5.
	StuckBelow float64
	// MoveKinds are call kinds that attempt movement whatever their steps'
	// actions. Default: go_to, travel, walk, move, move_to, navigate.
	MoveKinds []string
	// NoNow turns off writing now/state.json and now/frame.png.
	NoNow bool
	// Clock gives the row's "time" (default time.Now).
	Clock func() time.Time
	// Logger receives debug records (default slog.Default()).
	Logger *slog.Logger
	// Procedures runs the record protocol's "call" op (default: a Runner
	// over the store's mine/procedures).
	Procedures *Runner
	// Reflexes are checked on the steps of episodes opened by the call op
	// (BeginProcedure, ProcedureStep). Nil: the store's mine/reflexes,
	// loaded afresh at each call, run with Procedures.
	Reflexes *ReflexSet
	// NoReflexes turns the reflex checks of the call op off.
	NoReflexes bool
	// SampleEvery is how many steps of an item pass between reflex checks
	// (default 4), as CallOptions.SampleEvery.
	SampleEvery int
	// Axes say which block a position falls in for the grid's walked,
	// blocked and hazard cells (default: the store's declared axes, else
	// floor).
	Axes episodes.Axes
}

// Recorder records episodes into a store. It holds the store's writer lock
// from NewRecorder until Close. It is not safe for concurrent use.
type Recorder struct {
	w         *episodes.Writer
	opt       Options
	life      int
	reflexDir string // mine/reflexes

	last       *State // the latest state: start of the next episode
	lastFrame  []byte // PNG of the latest frame, if any
	lastWalked *[3]int
	cur        *episode
	// lifeHasRows: the current life has an index row (an initial episode
	// can only be a life's first).
	lifeHasRows bool
}

// ErrNoEpisode is returned by Step, Note and End outside an episode. Its
// text names the protocol's ops (begin, call), which are Begin and
// BeginProcedure in Go.
var ErrNoEpisode = errors.New("no episode is open (begin or call opens one)")

// ErrInEpisode is returned by Begin, Initial and NewLife while an episode
// is open.
var ErrInEpisode = errors.New("an episode is open (end or abort closes it)")

// ErrNotFirst is returned by Initial when the current life already has an
// episode: the initial episode is a life's first or none.
var ErrNotFirst = errors.New("the initial episode can only be the first of a life")

// NewRecorder opens the store for writing (taking the writer lock: a
// second writer gets an error wrapping episodes.ErrLocked) and returns a
// recorder that numbers episodes on from the store's last id.
func NewRecorder(s *episodes.Store, opt Options) (*Recorder, error) {
	if opt.StuckBelow <= 0 {
		opt.StuckBelow = 0.5
	}
	if opt.MoveKinds == nil {
		opt.MoveKinds = []string{"go_to", "travel", "walk", "move", "move_to", "navigate"}
	}
	if opt.Clock == nil {
		opt.Clock = time.Now
	}
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	if opt.Axes == (episodes.Axes{}) {
		opt.Axes = s.Axes()
	}
	w, err := s.OpenWriter()
	if err != nil {
		return nil, fmt.Errorf("recorder: %w", err)
	}
	life, err := s.CurrentLife()
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("recorder: %w", err)
	}
	if opt.Procedures == nil {
		opt.Procedures = &Runner{Dir: s.Path(episodes.MineDir, "procedures"), Logger: opt.Logger}
	}
	r := &Recorder{w: w, opt: opt, life: life.N, reflexDir: s.Path(episodes.MineDir, "reflexes")}
	if err := r.resume(); err != nil {
		w.Close()
		return nil, err
	}
	// OpenWriter has cut any torn tail: a non-empty index has a row.
	if fi, err := os.Stat(life.IndexPath()); err == nil && fi.Size() > 0 {
		r.lifeHasRows = true
	}
	return r, nil
}

// Writer returns the underlying store writer (for NewLife and the like;
// do not write episodes through it while recording).
func (r *Recorder) Writer() *episodes.Writer { return r.w }

// NextID is the id the next episode will get.
func (r *Recorder) NextID() string { return r.w.NextID() }

// InEpisode reports whether an episode is open.
func (r *Recorder) InEpisode() bool { return r.cur != nil }

// Initial records the initial state as episode kind "initial" (summary
// "initial state", tag "initial"), as the paper's harness does for
// ep_000000. It must be the first episode of its life: after any other
// episode of the life it returns an error wrapping ErrNotFirst (NewLife
// starts a life that may have one). frame may be nil, an image.Image or
// PNG bytes (decoded fully: a truncated PNG is refused).
func (r *Recorder) Initial(st State, frame any) (episodes.Row, error) {
	if r.cur != nil {
		return episodes.Row{}, fmt.Errorf("initial: %w", ErrInEpisode)
	}
	if r.lifeHasRows {
		return episodes.Row{}, fmt.Errorf("initial: life %d already has episodes (up to %s): %w (life starts a new one)", r.life, episodes.EpisodeID(r.nextNum()-1), ErrNotFirst)
	}
	if err := checkState("state", st); err != nil {
		return episodes.Row{}, fmt.Errorf("initial: %w", err)
	}
	pngData, err := framePNG(frame)
	if err != nil {
		return episodes.Row{}, fmt.Errorf("initial: %w", err)
	}
	ep := &episode{id: r.w.NextID(), start: st, hasStart: true, startFrame: pngData, initial: true}
	row, err := r.commit(ep)
	if err != nil {
		return episodes.Row{}, err
	}
	r.lifeHasRows = true
	r.setLast(st, pngData)
	return row, nil
}

func (r *Recorder) nextNum() int64 {
	n, _ := episodes.ParseEpisodeID(r.w.NextID())
	return n
}

// Begin opens an episode doing c. Its start is the latest recorded state
// (from Initial or the previous episode); without one, the first step's
// state is the start.
func (r *Recorder) Begin(c Call) error {
	if r.cur != nil {
		return fmt.Errorf("begin: %w", ErrInEpisode)
	}
	if c.Kind == "" && len(c.Raw) == 0 {
		return errors.New("begin: the call has neither a kind nor a raw action")
	}
	if err := checkCall(c); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	// the episode owns its Meta: a caller's later change of its map does
	// not reach action.json (SetMeta does, explicitly)
	if c.Meta != nil {
		m := make(map[string]any, len(c.Meta))
		for k, v := range c.Meta {
			m[k] = v
		}
		c.Meta = m
	}
	ep := &episode{id: r.w.NextID(), call: c, prevLast: r.last, prevFrame: r.lastFrame}
	if r.last != nil {
		ep.start = cloneState(*r.last)
		ep.hasStart = true
		ep.startFrame = r.lastFrame
	}
	r.cur = ep
	return nil
}

// Step adds one step to the current episode and updates now/. Step
// numbers strictly increase: a step's must be past the previous step's,
// and the first step's past the episode's start state. A FramePNG is
// decoded fully (a truncated PNG is refused); a refused step changes
// nothing.
func (r *Recorder) Step(s Step) error {
	ep := r.cur
	if ep == nil {
		return fmt.Errorf("step: %w", ErrNoEpisode)
	}
	if len(ep.steps) > 0 {
		if prev := ep.steps[len(ep.steps)-1].State.Step; s.State.Step <= prev {
			return fmt.Errorf("step %d: step numbers must increase (the previous step was %d)", s.State.Step, prev)
		}
	} else if ep.hasStart && s.State.Step <= ep.start.Step {
		return fmt.Errorf("step %d: step numbers must increase (the episode starts at step %d)", s.State.Step, ep.start.Step)
	}
	for i, c := range s.Cells {
		if !slices.Contains(CellKinds, c.Kind) {
			return fmt.Errorf("step %d: cells[%d].kind: %q is not a kind a harness gives (want %s)", s.State.Step, i, c.Kind, orList(CellKinds))
		}
	}
	if len(ep.steps) >= MaxEpisodeSteps {
		return fmt.Errorf("step %d: the episode has %d steps, the most one episode holds (end it and begin another)", s.State.Step, MaxEpisodeSteps)
	}
	if err := checkState("state", s.State); err != nil {
		return fmt.Errorf("step %d: %w", s.State.Step, err)
	}
	if err := checkCells(s.Cells); err != nil {
		return fmt.Errorf("step %d: %w", s.State.Step, err)
	}
	if err := checkStrings("events", s.Events, MaxStringBytes); err != nil {
		return fmt.Errorf("step %d: %w", s.State.Step, err)
	}
	if err := checkValue("action", s.Action); err != nil {
		return fmt.Errorf("step %d: %w", s.State.Step, err)
	}
	eventBytes := ep.eventBytes
	for _, e := range s.Events {
		eventBytes += len(e)
	}
	if eventBytes > MaxEpisodeEventBytes {
		return fmt.Errorf("step %d: events: the episode's event lines would take %d bytes, more than the %d one episode keeps (its index row lists them all; end it and begin another)", s.State.Step, eventBytes, MaxEpisodeEventBytes)
	}
	pngData := s.FramePNG
	if pngData != nil {
		if err := checkPNG(pngData); err != nil {
			return fmt.Errorf("step %d: frame: %w", s.State.Step, err)
		}
	}
	if pngData == nil && s.Frame != nil {
		var err error
		if pngData, err = encodePNG(s.Frame); err != nil {
			return fmt.Errorf("step %d: %w", s.State.Step, err)
		}
	}
	if !ep.hasStart {
		ep.start = cloneState(s.State)
		ep.hasStart = true
		ep.startFrame = pngData
	}
	s.State = cloneState(s.State)
	s.Frame = nil
	s.FramePNG = nil
	ep.steps = append(ep.steps, s)
	ep.eventBytes = eventBytes
	if r.opt.Frames && pngData != nil {
		ep.frames = append(ep.frames, frameRec{step: s.State.Step, png: pngData})
	}
	r.setLast(s.State, pngData)
	return nil
}

// SetMeta sets one extra action.json field of the current episode (as
// Call.Meta does at Begin), for what is known only at its end: Runner.Call
// records the procedure's outcome with it.
func (r *Recorder) SetMeta(key string, v any) error {
	if r.cur == nil {
		return fmt.Errorf("set meta %q: %w", key, ErrNoEpisode)
	}
	if r.cur.call.Meta == nil {
		r.cur.call.Meta = map[string]any{}
	}
	r.cur.call.Meta[key] = v
	return nil
}

// Note adds a [NOTE] line (and an outcome note) to the current episode.
func (r *Recorder) Note(text string) error {
	if r.cur == nil {
		return fmt.Errorf("note: %w", ErrNoEpisode)
	}
	if err := checkLen("note: text", text, MaxTextBytes); err != nil {
		return err
	}
	if len(r.cur.notes) >= MaxListItems {
		return fmt.Errorf("note: the episode has %d notes, the most one episode keeps", MaxListItems)
	}
	r.cur.notes = append(r.cur.notes, text)
	return nil
}

// End closes the current episode: it computes the summary, tags, outcome,
// grid rows and log lines from the recorded states and writes the episode
// atomically, its index row last. It returns the row written.
func (r *Recorder) End() (episodes.Row, error) {
	ep := r.cur
	if ep == nil {
		return episodes.Row{}, fmt.Errorf("end: %w", ErrNoEpisode)
	}
	if !ep.hasStart {
		return episodes.Row{}, errors.New("end: the episode has no state (no initial, no earlier episode, no step)")
	}
	row, err := r.commit(ep)
	if err != nil {
		return episodes.Row{}, err
	}
	r.lifeHasRows = true
	r.cur = nil
	return row, nil
}

// Abort drops the current episode without writing anything: the latest
// state (the next episode's start, and now/) is again the one before it.
func (r *Recorder) Abort() {
	ep := r.cur
	if ep == nil {
		return
	}
	r.cur = nil
	if len(ep.steps) == 0 {
		return
	}
	r.last, r.lastFrame = ep.prevLast, ep.prevFrame
	r.writeNow()
}

// NewLife ends the current life (Writer.NewLife: its records move to
// previous/life_N, mine/ stays) and starts the next with no latest state:
// its first state carries nothing over, it may begin with an initial
// episode, and now/ is emptied. It is refused while an episode is open.
// It returns the life that ended.
func (r *Recorder) NewLife() (episodes.Life, error) {
	if r.cur != nil {
		return episodes.Life{}, fmt.Errorf("life: %w", ErrInEpisode)
	}
	frozen, err := r.w.NewLife()
	if err != nil {
		return episodes.Life{}, fmt.Errorf("life: %w", err)
	}
	r.life = frozen.N + 1
	r.last, r.lastFrame, r.lastWalked = nil, nil, nil
	r.lifeHasRows = false
	r.writeNow()
	return frozen, nil
}

// Close drops an unfinished episode (its steps are not recorded; now/ is
// back to the state before it) and releases the writer lock.
func (r *Recorder) Close() error {
	if r.cur != nil {
		r.opt.Logger.Warn("recorder closed inside an episode; its steps are dropped", "episode", r.cur.id, "steps", len(r.cur.steps))
		r.Abort()
	}
	return r.w.Close()
}

func (r *Recorder) setLast(st State, pngData []byte) {
	c := cloneState(st)
	r.last = &c
	if pngData != nil {
		r.lastFrame = pngData
	}
	if r.opt.NoNow {
		return
	}
	if b, err := episodes.MarshalPyIndent(stateJSON(c)); err == nil {
		if err := r.w.WriteNow(episodes.NowStateName, b); err != nil {
			r.opt.Logger.Warn("write now/state.json", "err", err)
		}
	}
	if pngData != nil {
		if err := r.w.WriteNow(episodes.NowFrameName, pngData); err != nil {
			r.opt.Logger.Warn("write now/frame.png", "err", err)
		}
	}
}

// writeNow makes now/ the latest state and frame again (after an abort or
// a new life): each is rewritten, or removed when there is none.
func (r *Recorder) writeNow() {
	if r.opt.NoNow {
		return
	}
	var st []byte
	if r.last != nil {
		st, _ = episodes.MarshalPyIndent(stateJSON(*r.last))
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{"state.json", st}, {"frame.png", r.lastFrame}} {
		var err error
		if f.data != nil {
			err = r.w.WriteNow(f.name, f.data)
		} else {
			err = r.w.RemoveNow(f.name)
		}
		if err != nil {
			r.opt.Logger.Warn("restore now/"+f.name, "err", err)
		}
	}
}

func framePNG(frame any) ([]byte, error) {
	switch f := frame.(type) {
	case nil:
		return nil, nil
	case []byte:
		if len(f) == 0 {
			return nil, nil
		}
		if err := checkPNG(f); err != nil {
			return nil, fmt.Errorf("frame: %w", err)
		}
		return f, nil
	case image.Image:
		return encodePNG(f)
	default:
		return nil, fmt.Errorf("frame: want image.Image or PNG bytes, got %T", frame)
	}
}

var pngEnc = png.Encoder{CompressionLevel: png.BestSpeed}

func encodePNG(img image.Image) ([]byte, error) {
	var b bytes.Buffer
	if err := pngEnc.Encode(&b, img); err != nil {
		return nil, fmt.Errorf("encode frame as PNG: %w", err)
	}
	return b.Bytes(), nil
}

func cloneState(s State) State {
	if s.Inventory != nil {
		inv := make(map[string]int, len(s.Inventory))
		for k, v := range s.Inventory {
			inv[k] = v
		}
		s.Inventory = inv
	}
	s.Milestones = append([]string(nil), s.Milestones...)
	return s
}
