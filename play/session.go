package play

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/harness"
	"github.com/mfm-project/mfm/task"
)

// Termination reasons in run.json.
const (
	EndRunning     = "running"     // the session is still on
	EndDone        = "done"        // every milestone reached
	EndBudget      = "budget"      // the step budget is spent
	EndInterrupted = "interrupted" // stopped from outside (Ctrl-C)
	EndWorldError  = "world-error" // the game failed
)

// Options configure a session.
type Options struct {
	Task     *task.Task
	TaskFile string
	Store    *episodes.Store
	World    World
	// Procedures runs the agent's mine/procedures (default: a Runner over
	// the store's); its Atoms are set to the world's.
	Procedures *harness.Runner
	// Mount is where the store is mounted (paths in turn blocks use it);
	// empty: store paths.
	Mount string
	// Seed is the world's map seed, as run.json reports it.
	Seed int64
	// Budget overrides the task's step budget when > 0.
	Budget int
	// GovernorRepeats is how many no-change finishes of the same entry at
	// the same spot are noted before a further one is refused (default 2).
	GovernorRepeats int
	// NoReflexes turns the reflex checks of procedure calls off.
	NoReflexes bool
	// NoProcedures ignores the agent's procedures (mine/procedures): a
	// plan may name atoms only (the no-procedures ablation).
	NoProcedures bool
	// NoObservations leaves the [FRAME] line out of the turn block (the
	// no-observations ablation; the mount hides the frames).
	NoObservations bool
	// Flat leaves the [MAP] lines out of the turn block (the flat
	// ablation; the mount hides grid.jsonl and map/, what they come from).
	Flat bool
	// MineFrozen says mine/ is mounted read-only (an evaluation's target
	// runs): the [END] line says the memory is frozen instead of asking
	// for notes.
	MineFrozen bool
	Logger     *slog.Logger
	// Clock gives times (default time.Now).
	Clock func() time.Time
	// Adaptor is the memory inside the loop (adaptor.go): nil, none.
	// ConsolidateEvery N > 0 has it consolidate after every N-th turn and
	// at the end of the run; 0: never (offers only).
	Adaptor          Adaptor
	ConsolidateEvery int
}

// Session runs one task in one world. Its methods are safe for
// concurrent use: turns run one at a time.
type Session struct {
	opt     Options
	atoms   map[string]AtomSpec
	tracker *task.Tracker
	life    episodes.Life
	started time.Time

	mu          sync.Mutex
	run         RunRecord
	startStep   int64
	indexOff    int64
	gridOff     int64
	grid        gridSummary
	recent      []EntryRecord
	gov         governor
	lastBlock   string
	lastFrame   string
	reads       *readLog       // the mount's access log, for reads_before
	fired       map[string]int // reflex firings in this run, by reflex
	refusals    int            // plans refused so far
	lastRefusal string         // why the latest was
	done        chan struct{}
	closed      bool
	label       atomic.Value // TurnLabel's string, read without mu

	// lastFrameFile is lastFrame in the store (lastFrame is as the
	// block shows it: under the mount when there is one)
	lastFrameFile string
}

// NewSession opens a session: the start state is the world's current
// state, milestones are evaluated from there on.
func NewSession(opt Options) (*Session, error) {
	if opt.Task == nil || opt.Store == nil || opt.World == nil {
		return nil, errors.New("play: a session needs a task, a store and a world")
	}
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	if opt.Clock == nil {
		opt.Clock = time.Now
	}
	if opt.GovernorRepeats <= 0 {
		opt.GovernorRepeats = 2
	}
	if opt.Procedures == nil {
		opt.Procedures = &harness.Runner{Dir: opt.Store.Path(episodes.MineDir, "procedures"), Logger: opt.Logger}
	}
	if opt.NoProcedures {
		opt.Procedures.Dir = opt.Store.Path(episodes.MetaDir, "no-procedures") // never created
	}
	atoms := specIndex(opt.World.Atoms())
	opt.Procedures.Atoms = map[string]bool{}
	for n := range atoms {
		opt.Procedures.Atoms[n] = true
	}
	life, err := opt.Store.CurrentLife()
	if err != nil {
		return nil, fmt.Errorf("play: %w", err)
	}
	budget := opt.Task.Budget
	if opt.Budget > 0 {
		budget = opt.Budget
	}
	s := &Session{opt: opt, atoms: atoms, tracker: task.NewTracker(opt.Task), life: life, started: opt.Clock(), done: make(chan struct{}), reads: newReadLog(opt.Store)}
	st := opt.World.State()
	s.startStep = st.Step
	s.tracker.SetStart(st)
	s.tracker.Observe(task.Observation{Step: st.Step, State: st})
	s.markGoals(st)
	// the store's existing episodes are not this run's
	if fi, err := os.Stat(life.IndexPath()); err == nil {
		s.indexOff = fi.Size()
	}
	if _, err := episodes.ReadGrid(life.GridPath(), 0, func(g episodes.GridRow) error { s.grid.add(g); return nil }, nil); err == nil {
		if fi, err := os.Stat(life.GridPath()); err == nil {
			s.gridOff = fi.Size()
		}
	}
	s.run = RunRecord{
		Task:        taskRecord(opt.Task, opt.TaskFile),
		Seed:        opt.Seed,
		Budget:      budget,
		PlanCap:     opt.Task.Cap(),
		StartStep:   st.Step,
		Start:       pos(st),
		Termination: EndRunning,
		Started:     s.started.UTC().Format(time.RFC3339),
		Store:       opt.Store.Root,
		Mount:       opt.Mount,
		Turns:       []TurnRecord{},
	}
	for i, m := range opt.Task.Milestones {
		s.run.Milestones = append(s.run.Milestones, MilestoneRecord{Name: m.Name, When: m.When, Index: i})
	}
	s.noteReached(s.tracker.Reached(), "")
	s.setLabel()
	if err := s.writeRun(); err != nil {
		return nil, err
	}
	return s, nil
}

// Done is closed when the run has ended (task done, budget spent,
// stopped).
func (s *Session) Done() <-chan struct{} { return s.done }

// Termination is the run's end reason (EndRunning while on).
func (s *Session) Termination() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.run.Termination
}

// Run returns a copy of the run record.
func (s *Session) Run() RunRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, _ := json.Marshal(s.run)
	var r RunRecord
	_ = json.Unmarshal(b, &r)
	return r
}

// Stop ends the run with reason (EndInterrupted, …) if it is still on.
func (s *Session) Stop(reason string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.end(reason)
		s.consolidateAtStop()
	}
	return s.writeRun()
}

func (s *Session) end(reason string) {
	if s.closed {
		return
	}
	s.closed = true
	s.run.Termination = reason
	s.run.Ended = s.opt.Clock().UTC().Format(time.RFC3339)
	s.run.WallSeconds = round2(s.opt.Clock().Sub(s.started).Seconds())
	close(s.done)
	s.setLabel()
}

// TurnLabel says where the run stands, for the access log's rows (fs
// Options.Turn): "t0003" while turn t0003 runs, "before t0004" between
// turns (before the first: "before t0001"), "after t0009" once the run
// has ended (t0000 when it had no turn). It never blocks.
func (s *Session) TurnLabel() string {
	l, _ := s.label.Load().(string)
	return l
}

// setLabel sets TurnLabel between turns (s.mu held).
func (s *Session) setLabel() {
	n := len(s.run.Turns)
	if s.closed {
		s.label.Store(fmt.Sprintf("after t%04d", n))
	} else {
		s.label.Store(fmt.Sprintf("before t%04d", n+1))
	}
}

// PlanError is a plan refused before anything ran: nothing was recorded.
type PlanError struct{ Err error }

func (e *PlanError) Error() string { return e.Err.Error() }
func (e *PlanError) Unwrap() error { return e.Err }

// ErrEnded is returned (in a *PlanError) for a plan sent after the run
// ended: nothing acts any more, the memory stays for the agent's notes.
var ErrEnded = errors.New("the task has ended")

// endedError says the run is over, how it went, and that the agent
// should write its notes now.
func (s *Session) endedError() error {
	reached := 0
	for _, m := range s.run.Milestones {
		if m.Reached {
			reached++
		}
	}
	return fmt.Errorf("%w (%s): %d of %d goals reached, %d of %d steps used; nothing was done. %s",
		ErrEnded, s.run.Termination, reached, len(s.run.Milestones), s.run.StepsUsed, s.run.Budget, s.notesNow())
}

// notesNow tells the agent to write its notes while the memory is still
// there.
func (s *Session) notesNow() string {
	if s.opt.MineFrozen {
		return fmt.Sprintf("The memory is frozen for this run: %s is read-only, so there are no notes to write; mfmd act no longer acts, see run.json", s.shownMine(""))
	}
	return fmt.Sprintf("Write your notes now in %s (notes.md, working.md, procedures/): mfmd act no longer acts, "+
		"the memory stays until mfmd play is stopped (Ctrl-C) or its --linger runs out; see run.json", s.shownMine(""))
}

// step is one resolved plan entry.
type step struct {
	entry Entry
	spec  *AtomSpec // atom
	args  Args
	proc  *harness.Procedure // procedure
	max   int                // worst-case step estimate
}

// estimates is the per-entry step estimates of a plan, as a refusal
// prints them: "look_abs ≤10 ×3, go_to ≤234, {"forward":1} x20 ≤21".
func estimates(steps []step) string {
	var order []string
	count := map[string]int{}
	for _, sp := range steps {
		name := sp.entry.Name
		if sp.entry.IsRaw() {
			name = sp.entry.String()
		}
		k := fmt.Sprintf("%s ≤%d", name, sp.max)
		if count[k] == 0 {
			order = append(order, k)
		}
		count[k]++
	}
	for i, k := range order {
		if n := count[k]; n > 1 {
			order[i] = fmt.Sprintf("%s ×%d", k, n)
		}
	}
	return strings.Join(order, ", ")
}

// resolve checks a plan against the world's atoms, the agent's
// procedures and the plan cap, and returns the steps to run.
func (s *Session) resolve(ctx context.Context, entries []Entry, st harness.State) ([]step, int, error) {
	var out []step
	total := 0
	for i, e := range entries {
		where := fmt.Sprintf("entry %d %s", i+1, e.String())
		sp := step{entry: e}
		switch {
		case e.IsRaw():
			if err := rawKeysOK(e.Action, s.opt.World.RawKeys()); err != nil {
				return nil, 0, fmt.Errorf("%s: %w", where, err)
			}
			sp.max = e.Repeat + 1
		default:
			if p, err := harness.FindProcedure(s.opt.Procedures.Dir, e.Name, harness.KindProcedure); err == nil {
				sp.proc = p
				n, err := s.expandMax(ctx, e, st)
				if err != nil {
					return nil, 0, fmt.Errorf("%s: %w", where, err)
				}
				sp.max = n
			} else if spec, ok := s.atoms[e.Name]; ok {
				args, err := spec.CheckArgs(e.Args)
				if err != nil {
					return nil, 0, fmt.Errorf("%s: %w", where, err)
				}
				sp.spec, sp.args = &spec, args
				sp.max = 1
				if spec.MaxSteps != nil {
					sp.max = spec.MaxSteps(args, st)
				}
			} else if errors.Is(err, harness.ErrNotFound) {
				return nil, 0, fmt.Errorf("%s: no atom or procedure %q (atoms: %s; procedures are in mine/procedures; see mfmd act --list)", where, e.Name, strings.Join(sortedAtomNames(s.opt.World.Atoms()), ", "))
			} else {
				return nil, 0, fmt.Errorf("%s: %w", where, err)
			}
		}
		total += sp.max
		out = append(out, sp)
	}
	if limit := s.run.PlanCap; total > limit {
		return nil, total, fmt.Errorf("the plan may take up to %d steps, over the cap of %d per plan (worst-case estimates: %s; see mfmd act --list): send fewer or shorter entries", total, limit, estimates(out))
	}
	return out, total, nil
}

// expandMax expands a procedure call against st and sums its items'
// step bounds.
func (s *Session) expandMax(ctx context.Context, e Entry, st harness.State) (int, error) {
	res, err := s.opt.Procedures.Run(ctx, e.Name, argMap(e.Args), stateJSONOf(st))
	if err != nil {
		return 0, err
	}
	total := 0
	for _, it := range res.Items {
		n, err := s.itemMax(it, st)
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

func (s *Session) itemMax(it harness.Item, st harness.State) (int, error) {
	if it.Kind == harness.ItemRaw {
		if err := rawKeysOK(it.Action, s.opt.World.RawKeys()); err != nil {
			return 0, fmt.Errorf("procedure item %v: %w", it.Entry(), err)
		}
		return it.Repeat + 1, nil
	}
	spec, ok := s.atoms[it.Name]
	if !ok {
		return 0, fmt.Errorf("procedure item %s: no such atom", it.Name)
	}
	args, err := spec.CheckArgs(harness.ArgsOf(it.Args))
	if err != nil {
		return 0, fmt.Errorf("procedure item: %w", err)
	}
	if spec.MaxSteps == nil {
		return 1, nil
	}
	return spec.MaxSteps(args, st), nil
}

func argMap(args []harness.Arg) map[string]any {
	m := map[string]any{}
	for _, a := range args {
		m[a.Name] = a.Value
	}
	return m
}

// Act runs one turn: it parses and checks the plan (a *PlanError, with
// nothing recorded, when it is refused), runs its entries in order until
// one fails, the budget is spent or the task is done, and returns the
// turn block.
func (s *Session) Act(ctx context.Context, src, source string) (string, *TurnRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", nil, &PlanError{s.endedError()}
	}
	refuse := func(err error) (string, *TurnRecord, error) {
		s.refusals++
		s.lastRefusal = err.Error()
		return "", nil, &PlanError{err}
	}
	entries, err := ParsePlan(src)
	if err != nil {
		return refuse(err)
	}
	st0 := s.opt.World.State()
	steps, total, err := s.resolve(ctx, entries, st0)
	if err != nil {
		return refuse(err)
	}
	if key := entries[0].String(); s.gov.refuses(key, st0) {
		return refuse(fmt.Errorf("governor: %s already finished %d times in a row here changing nothing; it is refused before it spends steps: change the plan", key, s.gov.count))
	}
	s.noteUse(entries)
	t0 := s.opt.Clock()
	turn := TurnRecord{ID: fmt.Sprintf("t%04d", len(s.run.Turns)+1), Source: source, Plan: strings.TrimSpace(src), Started: t0.UTC().Format(time.RFC3339Nano), StepsPlanned: total, StepBefore: st0.Step}
	b := &blockBuilder{turn: &turn, before: st0}
	s.label.Store(turn.ID)
	var worldErr error
	for i, sp := range steps {
		if s.usedLocked() >= s.run.Budget {
			b.dropped(steps[i:], "the step budget is spent")
			break
		}
		cur := s.opt.World.State()
		if key := sp.entry.String(); s.gov.refuses(key, cur) {
			rec := EntryRecord{Entry: key, Outcome: "refused", Note: fmt.Sprintf("governor: finished %d times in a row here changing nothing", s.gov.count)}
			turn.Entries = append(turn.Entries, rec)
			b.action(rec)
			b.dropped(steps[i+1:], "an entry was refused")
			break
		}
		if sp.entry.Why != "" {
			b.plan = append(b.plan, sp.entry.Why)
		}
		rec, err := s.runStep(ctx, sp, b)
		s.gov.observe(rec.Entry, cur, s.opt.World.State(), rec, s.opt.GovernorRepeats, b)
		turn.Entries = append(turn.Entries, rec)
		s.recent = append(s.recent, rec)
		if len(s.recent) > 8 {
			s.recent = s.recent[len(s.recent)-8:]
		}
		b.action(rec)
		if err != nil {
			worldErr = err
			b.dropped(steps[i+1:], "the world failed")
			break
		}
		if s.tracker.Done() {
			b.dropped(steps[i+1:], "the task is done")
			break
		}
		if rec.Outcome != "ok" {
			b.dropped(steps[i+1:], "an entry failed")
			break
		}
	}
	after := s.opt.World.State()
	for _, r := range b.reached {
		turn.Milestones = append(turn.Milestones, r.Name)
	}
	turn.StepAfter = after.Step
	turn.Steps = int(after.Step - st0.Step)
	turn.Millis = s.opt.Clock().Sub(t0).Milliseconds()
	s.run.StepsUsed = s.usedLocked()
	s.run.Turns = append(s.run.Turns, turn)
	s.adaptTurn(ctx, &s.run.Turns[len(s.run.Turns)-1], b, after, worldErr != nil || s.tracker.Done() || s.run.StepsUsed >= s.run.Budget)
	turn = s.run.Turns[len(s.run.Turns)-1]
	s.run.WallSeconds = round2(s.opt.Clock().Sub(s.started).Seconds())
	switch {
	case worldErr != nil:
		s.end(EndWorldError)
		s.run.Error = worldErr.Error()
	case s.tracker.Done():
		s.end(EndDone)
	case s.run.StepsUsed >= s.run.Budget:
		s.end(EndBudget)
	}
	s.setLabel()
	block := s.renderBlock(b, after)
	s.lastBlock = block
	if err := s.writeRun(); err != nil {
		return block, &turn, err
	}
	if worldErr != nil {
		return block, &turn, worldErr
	}
	return block, &turn, nil
}

func (s *Session) usedLocked() int { return int(s.opt.World.State().Step - s.startStep) }

// runStep executes one resolved entry and collects what it recorded.
func (s *Session) runStep(ctx context.Context, sp step, b *blockBuilder) (EntryRecord, error) {
	rec := EntryRecord{Entry: sp.entry.String()}
	before := s.opt.World.State()
	var out Outcome
	var err error
	switch {
	case sp.entry.IsRaw():
		out, err = s.opt.World.Raw(ctx, sp.entry.Action, sp.entry.Repeat)
	case sp.spec != nil:
		out, err = s.opt.World.Call(ctx, sp.spec.Name, sp.args)
	default:
		out, err = s.callProcedure(ctx, sp, b)
	}
	rec.OK = out.OK
	rec.Note = out.Note
	rec.Outcome = "ok"
	if !out.OK {
		rec.Outcome = "failed"
	}
	after := s.opt.World.State()
	rec.Steps = int(after.Step - before.Step)
	rows, rerr := s.newRows()
	for _, r := range rows {
		rec.Episodes = append(rec.Episodes, r.ID)
		b.events = append(b.events, r.Events...)
		rec.Events = append(rec.Events, r.Events...)
		s.observeEpisode(r, b)
	}
	if rerr != nil {
		s.opt.Logger.Warn("play: read the new index rows", "err", rerr)
	}
	s.collectGrid()
	if err != nil {
		rec.Outcome = "error"
		rec.Note = err.Error()
		return rec, err
	}
	return rec, nil
}

// callProcedure expands the agent's procedure against the current state
// and runs its items as atom calls, checking the reflexes after each.
func (s *Session) callProcedure(ctx context.Context, sp step, b *blockBuilder) (Outcome, error) {
	name := sp.entry.Name
	res, err := s.opt.Procedures.Run(ctx, name, argMap(sp.entry.Args), stateJSONOf(s.opt.World.State()))
	if err != nil {
		return Outcome{Note: err.Error()}, nil
	}
	for _, n := range res.Notes {
		b.notes = append(b.notes, n)
	}
	var reflexes *harness.ReflexSet
	if !s.opt.NoReflexes {
		reflexes, err = harness.LoadReflexes(s.opt.Store.Path(episodes.MineDir, "reflexes"), s.opt.Procedures)
		if err != nil {
			b.notes = append(b.notes, "reflexes left out: "+err.Error())
		}
	}
	queue := append([]harness.Item(nil), res.Items...)
	last := Outcome{OK: true, Note: fmt.Sprintf("%d item(s) ran", len(queue))}
	for i := 0; i < len(queue); i++ {
		if s.usedLocked() >= s.run.Budget {
			return Outcome{Note: fmt.Sprintf("%s: the step budget ran out at item %d of %d", name, i+1, len(queue))}, nil
		}
		it := queue[i]
		prev := s.opt.World.State()
		var out Outcome
		if it.Kind == harness.ItemRaw {
			out, err = s.opt.World.Raw(ctx, it.Action, it.Repeat)
		} else {
			spec := s.atoms[it.Name]
			args, aerr := spec.CheckArgs(harness.ArgsOf(it.Args))
			if aerr != nil {
				return Outcome{Note: fmt.Sprintf("%s: item %d: %v", name, i+1, aerr)}, nil
			}
			out, err = s.opt.World.Call(ctx, it.Name, args)
		}
		if err != nil {
			return out, err
		}
		if out.Note != "" {
			b.notes = append(b.notes, fmt.Sprintf("%s > %s: %s", name, it.EntryName(), out.Note))
		}
		if !out.OK {
			return Outcome{Note: fmt.Sprintf("%s: item %d (%s) failed: %s", name, i+1, it.EntryName(), out.Note)}, nil
		}
		cur := s.opt.World.State()
		fired := reflexes.Check(ctx, harness.Sample(cur, &prev, it.EntryName()))
		stop := false
		var added []harness.Item
		for _, f := range fired {
			if s.fired == nil {
				s.fired = map[string]int{}
			}
			s.fired[f.Reflex]++
			b.notes = append(b.notes, f.LogNote())
			added = append(added, f.Items...)
			stop = stop || f.Stop
		}
		if len(fired) > 0 {
			rest := queue[i+1:]
			queue = append(append([]harness.Item(nil), queue[:i+1]...), added...)
			if !stop {
				queue = append(queue, rest...)
			} else {
				b.notes = append(b.notes, fmt.Sprintf("%s: a reflex stopped it; %d item(s) dropped", name, len(rest)))
			}
		}
		last = out
	}
	return Outcome{OK: true, Note: fmt.Sprintf("%s: %d item(s) ran; last: %s", name, len(queue), last.Note)}, nil
}

// newRows reads the index rows appended since the last call.
func (s *Session) newRows() ([]episodes.Row, error) {
	var rows []episodes.Row
	off, err := episodes.ReadRows(s.life.IndexPath(), s.indexOff, func(r episodes.Row, _ episodes.Line) error {
		rows = append(rows, r)
		return nil
	}, nil)
	if err == nil {
		s.indexOff = off
	}
	return rows, err
}

// observeEpisode feeds an episode's logged steps to the milestone
// tracker and remembers its latest frame.
func (s *Session) observeEpisode(r episodes.Row, b *blockBuilder) {
	dir := s.opt.Store.Path(r.Path)
	if r.Path == "" || !filepath.IsAbs(dir) {
		dir = s.life.EpisodeDir(r.ID)
	}
	obs, err := readSteps(filepath.Join(dir, "steps.jsonl"))
	if err != nil {
		s.opt.Logger.Warn("play: read steps", "episode", r.ID, "err", err)
	}
	for _, o := range obs {
		reached := s.tracker.Observe(o)
		s.noteReached(reached, b.turn.ID)
		b.reached = append(b.reached, reached...)
	}
	frame := ""
	if fs, _ := filepath.Glob(filepath.Join(dir, "frames", "*.png")); len(fs) > 0 {
		sort.Strings(fs)
		frame = fs[len(fs)-1]
	} else if _, err := os.Stat(filepath.Join(dir, "observation", "image.png")); err == nil {
		frame = filepath.Join(dir, "observation", "image.png")
	}
	if frame != "" {
		s.lastFrame, s.lastFrameFile = s.shown(frame), frame
	}
	b.episodes = append(b.episodes, r.ID)
	if b.summaries == nil {
		b.summaries = map[string]string{}
	}
	b.summaries[r.ID] = r.Summary
}

// shown is a store path as the agent sees it: under the mount when there
// is one.
func (s *Session) shown(p string) string {
	if s.opt.Mount == "" {
		return p
	}
	if rel, err := filepath.Rel(s.life.Root, p); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.Join(s.opt.Mount, rel)
	}
	return p
}

func (s *Session) noteReached(rs []task.Reached, turn string) {
	for _, r := range rs {
		for i := range s.run.Milestones {
			m := &s.run.Milestones[i]
			if m.Name == r.Name && !m.Reached {
				m.Reached, m.Step, m.Turn = true, r.Step, turn
				m.StepsFromStart = r.Step - s.startStep
			}
		}
	}
}

// readSteps reads an episode's steps.jsonl into observations.
func readSteps(path string) ([]task.Observation, error) {
	var out []task.Observation
	_, err := episodes.ScanFile(path, 0, func(l episodes.Line) error {
		var line struct {
			Step   int64          `json:"step"`
			State  map[string]any `json:"state"`
			Events []string       `json:"events"`
		}
		if err := json.Unmarshal(l.Data, &line); err != nil {
			return nil
		}
		st := StateFromJSON(line.State)
		st.Step = line.Step
		out = append(out, task.Observation{Step: line.Step, State: st, Events: line.Events})
		return nil
	})
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return out, err
}

// StateFromJSON reads a state.json object (as steps.jsonl holds it) into
// a harness.State; fields besides pos, inventory, vitals.health, step,
// gui_open and milestones go to Extra.
func StateFromJSON(m map[string]any) harness.State {
	var s harness.State
	num := func(v any) float64 { f, _ := v.(float64); return f }
	s.Step = int64(num(m["step"]))
	if p, ok := m["pos"].(map[string]any); ok {
		s.X, s.Y, s.Z, s.Yaw, s.Pitch = num(p["x"]), num(p["y"]), num(p["z"]), num(p["yaw"]), num(p["pitch"])
	}
	s.Inventory = map[string]int{}
	if inv, ok := m["inventory"].(map[string]any); ok {
		for k, v := range inv {
			s.Inventory[k] = int(num(v))
		}
	}
	if v, ok := m["vitals"].(map[string]any); ok {
		s.Health = num(v["health"])
	}
	s.GUIOpen, _ = m["gui_open"].(bool)
	s.Extra = map[string]any{}
	for k, v := range m {
		switch k {
		case "step", "pos", "inventory", "gui_open", "milestones":
		default:
			s.Extra[k] = v
		}
	}
	return s
}

// stateJSONOf is the state.json form of st, a procedure's stdin.
func stateJSONOf(st harness.State) []byte {
	m := map[string]any{}
	for k, v := range st.Extra {
		m[k] = v
	}
	m["step"] = st.Step
	m["pos"] = map[string]any{"x": st.X, "y": st.Y, "z": st.Z, "yaw": st.Yaw, "pitch": st.Pitch}
	m["inventory"] = st.Inventory
	m["gui_open"] = st.GUIOpen
	vit := map[string]any{}
	if v, ok := st.Extra["vitals"].(map[string]any); ok {
		for k, x := range v {
			vit[k] = x
		}
	}
	vit["health"] = st.Health
	m["vitals"] = vit
	b, _ := json.Marshal(m)
	return b
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }

func pos(st harness.State) [3]float64 {
	return [3]float64{round2(st.X), round2(st.Y), round2(st.Z)}
}

// Refusals is the number of plans refused so far and why the latest was.
func (s *Session) Refusals() (int, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refusals, s.lastRefusal
}

// LastBlock is the latest turn block.
func (s *Session) LastBlock() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastBlock
}

// Status is a short block of where the run stands (no turn).
func (s *Session) Status() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := &blockBuilder{turn: &TurnRecord{ID: "status"}, before: s.opt.World.State()}
	return s.renderBlock(b, s.opt.World.State())
}

// ListAtoms is the text of `mfmd act --list`: the atoms with their
// parameters and the agent's procedures.
func (s *Session) ListAtoms() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var w strings.Builder
	fmt.Fprintln(&w, "Atoms (closed-loop; each call is one episode):")
	atoms := s.opt.World.Atoms()
	sort.Slice(atoms, func(i, j int) bool { return atoms[i].Name < atoms[j].Name })
	for _, a := range atoms {
		fmt.Fprintf(&w, "  %s  [steps: %s]\n      %s\n", a.signature(), a.stepsDoc(), a.Doc)
	}
	fmt.Fprintf(&w, "Raw actions: {KEY: 1, ...} xN holding any of %s for N ticks [steps: N+1].\n", strings.Join(s.opt.World.RawKeys(), ", "))
	procs, bad, err := harness.ListProcedures(s.opt.Procedures.Dir, harness.KindProcedure)
	fmt.Fprintf(&w, "Your procedures (%s):\n", s.shownMine("procedures"))
	switch {
	case err != nil:
		fmt.Fprintf(&w, "  (cannot list: %v)\n", err)
	case len(procs) == 0:
		fmt.Fprintln(&w, "  (none yet: write one, see the brief)")
	}
	for _, p := range procs {
		dis := ""
		if p.IsDisabled() {
			dis = " [disabled: " + p.Disabled + "]"
		}
		fmt.Fprintf(&w, "  %s%s\n      %s\n%s", procSignature(p), dis, p.Description, procParamDocs(p))
	}
	for _, e := range bad {
		fmt.Fprintf(&w, "  unusable: %v\n", e)
	}
	fmt.Fprintf(&w, "Conventions:\n%s", conventionsText("  "))
	fmt.Fprintf(&w, "Plan cap: %d steps per plan, counting every entry at its worst-case estimate [steps] (a procedure: the sum of its items'); a step is one game tick. Budget %d steps, %d used.\n", s.run.PlanCap, s.run.Budget, s.usedLocked())
	return w.String()
}

func (s *Session) shownMine(sub string) string {
	if s.opt.Mount != "" {
		return filepath.Join(s.opt.Mount, "mine", sub)
	}
	return s.opt.Store.Path(episodes.MineDir, sub)
}
