// Package consolidate turns a store's recorded experience into proposed
// knowledge (after the MineEvolve paper): a Monitor derives typed feedback
// per episode, an Inducer proposes skills and remedies, a Curator validates,
// merges and retrieves them, and Citations resolves mine/'s references to
// episodes. It only reads the record (index, episodes, grid, log) and writes
// derived files under .mfm/consolidate/ and, when asked, new files in mine/.
package consolidate

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"

	"github.com/mfm-project/mfm/episodes"
)

// Failure types of the Monitor's taxonomy (docs/CONSOLIDATE.md).
const (
	FailNone        = ""
	FailDeath       = "DEATH"        // health reached 0 or a death event
	FailDamage      = "DAMAGE"       // health fell
	FailNavStuck    = "NAV_STUCK"    // stuck tag (movement attempted, < 0.5 blocks moved) and no note saying it arrived, or a note saying it was blocked
	FailGUI         = "GUI_FAILURE"  // a GUI is left open without any inventory change
	FailMissingTool = "MISSING_TOOL" // a note or event says a tool/item was missing
	FailNoEffect    = "NO_EFFECT"    // nothing changed: no movement, inventory or milestone
)

// Config holds the Monitor's and Inducer's weights and thresholds.
type Config struct {
	LambdaX, LambdaV, LambdaG float64 // progress weights (position, inventory, goal)
	EpsX, EpsV                float64 // saturation constants
	EpsP                      float64 // stagnation threshold on progress
	H                         int     // window of episodes for the failure rate
	Eta                       float64 // failure rate that triggers a remedy
	MinRun                    int     // consecutive verified successes that make a skill
	// StaticK freezes the persistent knowledge store (the paper's Static
	// Store ablation): it is read and checked against, never changed.
	StaticK bool
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{LambdaX: 0.4, LambdaV: 0.4, LambdaG: 0.2, EpsX: 1, EpsV: 1, EpsP: 0.1, H: 5, Eta: 0.6, MinRun: 2}
}

// Feedback is the Monitor's typed feedback for one episode.
type Feedback struct {
	Life      int    `json:"life"`
	Episode   string `json:"episode"`
	FirstStep int64  `json:"first_step"`
	LastStep  int64  `json:"last_step"`
	Subgoal   string `json:"subgoal,omitempty"` // goals.next of the start state, when recorded
	Goal      string `json:"goal,omitempty"`    // the plan's declared goal (action.json "goal"), when recorded
	// SubgoalSource and SubgoalCheck say what y was checked against
	// (CheckSuccess): a milestone, the plan's goal, the call's purpose, or
	// the fallback.
	SubgoalSource string         `json:"subgoal_source"`
	SubgoalCheck  string         `json:"subgoal_check"`
	Arrived       bool           `json:"arrived,omitempty"`    // the call's notes say it reached its target
	Call          string         `json:"call"`                 // action_kind (procedure or raw keys)
	Note          string         `json:"note,omitempty"`       // the row's note, else the outcome's first note
	Success       bool           `json:"success"`              // y = CheckSuccess(z, s_post)
	Verified      bool           `json:"verified"`             // success shown by a milestone, or an inventory gain when the call's notes do not say it failed its aim
	AimFailed     string         `json:"aim_failed,omitempty"` // the call's own note saying it failed its aim (aimFailedWords), quoted
	Aimed         []string       `json:"aimed,omitempty"`      // items the call aimed at (its arguments) or its own notes name as collected/obtained
	AimKnown      bool           `json:"aim_known,omitempty"`  // the call has arguments or notes of its own: the record says something of its aim
	Moved         float64        `json:"moved"`
	Pos           [3]float64     `json:"pos"`
	InvDelta      map[string]int `json:"inventory_delta"`
	Milestones    []string       `json:"milestones"`
	Changed       []string       `json:"changed"` // what the recorded state shows changed (Change* constants)
	Failure       string         `json:"failure"`
	Progress      float64        `json:"progress"`
	Stagnant      bool           `json:"stagnant"`
	GUIOpen       bool           `json:"gui_open"`
	Previous      bool           `json:"previous,omitempty"` // the episode is in a frozen previous life
}

func (f Feedback) ref() Ref { return Ref{Life: f.Life, ID: f.Episode, Previous: f.Previous} }

// rowExtra are index-row fields that Row does not decode.
type rowExtra struct {
	InventoryDelta map[string]int `json:"inventory_delta"`
}

// Changes a Feedback lists in Changed: what the recorded state shows moved.
const (
	ChangePosition  = "position"  // moved, or got, ≥ 0.5 blocks from the start
	ChangeCamera    = "camera"    // yaw or pitch turned ≥ 1°
	ChangeInventory = "inventory" // a non-zero inventory delta
	ChangeMainhand  = "mainhand"  // the held item differs
	ChangeGUI       = "gui"       // gui_open differs
	ChangeMilestone = "milestone" // a milestone was reached
	ChangeWorld     = "world"     // an event says a block was mined or placed
)

// worldEvents are the first words of events that change the world.
var worldEvents = []string{"mine_block", "place_block", "dig_block", "break_block", "placed", "broke"}

// arrivedWords in an episode's notes say a movement reached its target:
// a "stuck" tag then only means there was little left to walk, and an
// unchanged state that the call found its goal already met.
var arrivedWords = []string{"arrived", "reached the target", "already at the target"}

// blockedWords in an episode's notes say a movement did not reach its
// target, however far it got before ("go_to: blocked: no progress for 3 s,
// 5.9 blocks short").
var blockedWords = []string{"blocked", "no progress", "blocks short"}

// cameraAtoms are the calls that only turn the view; used to tell a
// camera-only call when neither end of the episode records yaw and pitch.
var cameraAtoms = []string{"look", "look_at", "look_abs", "turn", "turn_to", "scan_around"}

// Monitor derives feedback for every episode of every life of s, oldest first.
func Monitor(s *episodes.Store, cfg Config) ([]Feedback, error) {
	lives, err := s.Lives()
	if err != nil {
		return nil, fmt.Errorf("monitor: %w", err)
	}
	var out []Feedback
	run := readRunMilestones(s)
	for _, l := range lives {
		rows, err := l.AllRows()
		if err != nil {
			return nil, fmt.Errorf("monitor life %d: %w", l.N, err)
		}
		// Start states, read once: an episode's end is the next one's start
		// when it records no end state of its own.
		starts := make([]*episodes.State, len(rows))
		for i := range rows {
			starts[i], _ = episodes.ReadState(l.RowDir(&rows[i])) // nil when absent or malformed
		}
		for i, r := range rows {
			if r.Kind == "initial" {
				continue
			}
			var next *episodes.Row
			var nextStart *episodes.State
			if i+1 < len(rows) {
				next, nextStart = &rows[i+1], starts[i+1]
			}
			out = append(out, feedbackOf(l, r, starts[i], next, nextStart, cfg, run))
		}
	}
	return out, nil
}

// readSteps returns the states of an episode's steps.jsonl (nil if absent).
func readSteps(dir string) []*episodes.State {
	var out []*episodes.State
	_ = episodes.ScanSteps(dir, func(s episodes.Step) error {
		if s.State != nil {
			out = append(out, s.State)
		}
		return nil
	}, nil) // a malformed or foreign line is skipped
	return out
}

// feedbackOf derives the feedback of episode r from its row, its files,
// its start state and the next episode (whose start is r's end when r
// records none).
func feedbackOf(l episodes.Life, r episodes.Row, start *episodes.State, next *episodes.Row, nextStart *episodes.State, cfg Config, run *runMilestones) Feedback {
	dir := l.RowDir(&r)
	oc, err := episodes.ReadOutcome(dir)
	haveOutcome := err == nil
	if !haveOutcome {
		oc = &episodes.Outcome{}
	}
	f := recordedFeedback(l, r, start, oc)
	run.apply(&f)
	if oc.Moved == nil && next != nil {
		f.Moved = math.Round(math.Hypot(next.X-r.X, next.Z-r.Z)*100) / 100
	}
	tr := traceOf(r, start, oc.EndState, readSteps(dir), next, nextStart)
	tags := append(append([]string(nil), r.Tags...), oc.Tags...)
	f.GUIOpen = contains(tags, "gui")
	f.Changed = changesOf(f, r, oc, tr)

	// The call's own notes (not another procedure's or the governor's):
	// do they say it failed its aim, and which items do they name as
	// collected? Its arguments name what it aimed at.
	own := ownNotes(f.Call, append([]string{r.Note}, oc.Notes...))
	f.AimFailed = aimFailure(own)
	var args map[string]any
	if a, err := episodes.ReadAction(dir); err == nil {
		args = a.Entry.Args
		var g struct {
			Goal string `json:"goal"`
		}
		if json.Unmarshal(a.Raw, &g) == nil {
			f.Goal = strings.TrimSpace(g.Goal)
		}
	}
	f.Aimed = aimedItems(args, own)
	f.AimKnown = len(args) > 0 || len(own) > 0

	text := strings.ToLower(r.Note + " " + strings.Join(r.Events, " "))
	if haveOutcome {
		text += " " + strings.ToLower(strings.Join(oc.Notes, " ")+" "+strings.Join(oc.Events, " "))
	}
	f.Arrived = anyWord(text, arrivedWords)
	f.Failure = failureOf(f, tags, text)
	gain, dv := 0, 0.0
	for _, v := range f.InvDelta {
		gain += max(v, 0)
		dv += math.Abs(float64(v))
	}
	f.Verified = len(f.Milestones) > 0 || gain > 0 && f.AimFailed == ""
	f.Success, f.SubgoalSource, f.SubgoalCheck = CheckSuccess(&f, f.Goal, tr)
	if !f.Success && f.Failure == FailNone {
		f.Failure = FailSubgoalUnmet
	}
	pg := 0.0
	if len(f.Milestones) > 0 {
		pg = 1
	}
	f.Progress = round3(Progress(cfg, tr.variance(f.Moved), dv, pg))
	f.Stagnant = Stagnant(cfg, f.Progress, f.Success)
	return f
}

// recordedFeedback is what the row and outcome.json say directly: the
// episode, its call, inventory delta, milestones, distance moved, subgoal
// and note.
func recordedFeedback(l episodes.Life, r episodes.Row, start *episodes.State, oc *episodes.Outcome) Feedback {
	f := Feedback{Life: l.N, Episode: r.ID, FirstStep: r.FirstStep, LastStep: r.LastStep, Call: r.Action(),
		Pos: [3]float64{r.X, r.Y, r.Z}, Previous: !l.Current, InvDelta: map[string]int{}, Milestones: []string{}, Changed: []string{}}
	var ex rowExtra
	_ = json.Unmarshal(r.Raw, &ex)
	for k, v := range ex.InventoryDelta {
		f.InvDelta[k] = v
	}
	for k, v := range oc.InventoryDelta {
		f.InvDelta[k] = v
	}
	for k, v := range f.InvDelta {
		if v == 0 {
			delete(f.InvDelta, k)
		}
	}
	f.Milestones = append(f.Milestones, oc.MilestoneTransition...)
	for _, e := range r.Events {
		if m, ok := strings.CutPrefix(e, "MILESTONE "); ok {
			m = strings.TrimSuffix(m, " verified")
			if !contains(f.Milestones, m) {
				f.Milestones = append(f.Milestones, m)
			}
		}
	}
	if oc.Moved != nil {
		f.Moved = *oc.Moved
	}
	if start != nil && start.Goals != nil {
		f.Subgoal = start.Goals.Next
	}
	f.Note = strings.TrimSpace(r.Note)
	if f.Note == "" && len(oc.Notes) > 0 {
		f.Note = strings.TrimSpace(oc.Notes[0])
	}
	return f
}

// trace is where an episode went: the states at its two ends (nil when
// not recorded) and the positions it went through, its start first.
type trace struct {
	start, end *episodes.State
	startPos   [3]float64
	positions  [][3]float64
}

// traceOf finds an episode's end — its outcome's end_state, else its last
// step's state, else the next episode's start (or the next row's
// position) — and its positions: its start, then every step of
// steps.jsonl; without steps, its start and its end.
func traceOf(r episodes.Row, start, end *episodes.State, steps []*episodes.State, next *episodes.Row, nextStart *episodes.State) trace {
	if end == nil && len(steps) > 0 {
		end = steps[len(steps)-1]
	}
	if end == nil && next != nil {
		end = nextStart
		if end == nil || end.Pos == nil {
			end = &episodes.State{Pos: &episodes.Pos{X: next.X, Y: next.Y, Z: next.Z}}
		}
	}
	tr := trace{start: start, end: end, startPos: [3]float64{r.X, r.Y, r.Z}}
	if start != nil && start.Pos != nil {
		tr.startPos = [3]float64{start.Pos.X, start.Pos.Y, start.Pos.Z}
	}
	tr.positions = [][3]float64{tr.startPos}
	for _, st := range steps {
		if st.Pos != nil {
			tr.positions = append(tr.positions, [3]float64{st.Pos.X, st.Pos.Y, st.Pos.Z})
		}
	}
	if len(tr.positions) == 1 && end != nil && end.Pos != nil {
		tr.positions = append(tr.positions, [3]float64{end.Pos.X, end.Pos.Y, end.Pos.Z})
	}
	return tr
}

// variance is Var(x) of the positions; with only the start known, that
// of a start and end moved apart.
func (tr trace) variance(moved float64) float64 {
	if len(tr.positions) > 1 {
		return Variance(tr.positions)
	}
	return (moved / 2) * (moved / 2)
}

// farthest is the farthest the episode got from its start (out and back
// counts).
func (tr trace) farthest() float64 {
	d := 0.0
	for _, p := range tr.positions {
		d = math.Max(d, math.Sqrt(sq(p[0]-tr.startPos[0])+sq(p[1]-tr.startPos[1])+sq(p[2]-tr.startPos[2])))
	}
	return d
}

// changesOf lists what the record shows changed (Change* constants).
func changesOf(f Feedback, r episodes.Row, oc *episodes.Outcome, tr trace) []string {
	changed := []string{}
	if f.Moved >= 0.5 || tr.farthest() >= 0.5 {
		changed = append(changed, ChangePosition)
	}
	if turned, known := cameraTurned(tr.start, tr.end); turned || !known && contains(cameraAtoms, f.Call) {
		changed = append(changed, ChangeCamera)
	}
	if len(f.InvDelta) > 0 {
		changed = append(changed, ChangeInventory)
	}
	start, end := tr.start, tr.end
	if start != nil && end != nil && start.Mainhand != nil && end.Mainhand != nil && *start.Mainhand != *end.Mainhand {
		changed = append(changed, ChangeMainhand)
	}
	if start != nil && end != nil && start.GUIOpen != nil && end.GUIOpen != nil && *start.GUIOpen != *end.GUIOpen {
		changed = append(changed, ChangeGUI)
	} else if opensGUI(f.Call) && f.GUIOpen && (start == nil || start.GUIOpen == nil || !*start.GUIOpen) {
		// A GUI opener tagged with an open GUI, from a state without one
		// (the end state not recording gui_open): it opened.
		changed = append(changed, ChangeGUI)
	}
	if len(f.Milestones) > 0 {
		changed = append(changed, ChangeMilestone)
	}
	for _, e := range append(append([]string(nil), r.Events...), oc.Events...) {
		if w, _, _ := strings.Cut(strings.TrimSpace(e), " "); contains(worldEvents, strings.ToLower(w)) {
			changed = append(changed, ChangeWorld)
			break
		}
	}
	return changed
}

// failureOf classifies an episode by its tags, notes and events and what
// changed (docs/CONSOLIDATE.md); FailNone when it did not fail.
func failureOf(f Feedback, tags []string, text string) string {
	has := func(t string) bool { return contains(tags, t) }
	arrived := anyWord(text, arrivedWords) // the call says it reached its target
	switch {
	case has("death"):
		return FailDeath
	case has("damage"):
		return FailDamage
	case has("stuck") && !arrived, anyWord(text, blockedWords):
		return FailNavStuck
	case missingTool(text):
		return FailMissingTool
	case f.GUIOpen && len(f.InvDelta) == 0 && len(f.Milestones) == 0 && !opensGUI(f.Call):
		return FailGUI
	case len(f.Changed) == 0 && !arrived:
		return FailNoEffect
	}
	return FailNone
}

// opensGUI reports whether call's purpose is to open a GUI: a GUI open
// afterwards is then its success, not a GUI failure.
func opensGUI(call string) bool { return guiOpeners[call] }

// Variance is Var(x) of the progress formula: the mean squared distance
// of the positions from their mean (the trace of their covariance; for
// two positions d apart it is (d/2)²).
func Variance(ps [][3]float64) float64 {
	if len(ps) == 0 {
		return 0
	}
	var m [3]float64
	for _, p := range ps {
		for i := range m {
			m[i] += p[i]
		}
	}
	for i := range m {
		m[i] /= float64(len(ps))
	}
	v := 0.0
	for _, p := range ps {
		v += sq(p[0]-m[0]) + sq(p[1]-m[1]) + sq(p[2]-m[2])
	}
	return v / float64(len(ps))
}

// Progress is p = λx·Var(x)/(εx+Var(x)) + λv·|Δv|₁/(εv+|Δv|₁) + λg·p_goal.
func Progress(cfg Config, varX, dv, pGoal float64) float64 {
	return cfg.LambdaX*varX/(cfg.EpsX+varX) + cfg.LambdaV*dv/(cfg.EpsV+dv) + cfg.LambdaG*pGoal
}

// Stagnant is the stagnation rule p < εp ∧ ¬success.
func Stagnant(cfg Config, p float64, success bool) bool { return p < cfg.EpsP && !success }

// cameraTurned reports whether yaw or pitch differ by 1° or more between
// start and end, and whether both ends record them at all.
func cameraTurned(start, end *episodes.State) (turned, known bool) {
	if start == nil || end == nil || start.Pos == nil || end.Pos == nil ||
		start.Pos.Yaw == nil || end.Pos.Yaw == nil || start.Pos.Pitch == nil || end.Pos.Pitch == nil {
		return false, false
	}
	dy := math.Mod(math.Abs(*end.Pos.Yaw-*start.Pos.Yaw), 360)
	dy = math.Min(dy, 360-dy)
	return dy >= 1 || math.Abs(*end.Pos.Pitch-*start.Pos.Pitch) >= 1, true
}

func sq(x float64) float64 { return x * x }

// aimFailedWords in a call's own notes say it failed what it was for,
// whatever its inventory did (dirt dug through on the way to a tree that
// was never reached). From the outcome notes of the two real stores
// (docs/CONSOLIDATE.md): the paper run's harvest_tree ("0 log(s)
// collected", "no trunk detected"), chop_tree ("chop stopped early: 75
// ticks and nothing broke"), fetch_water ("stopped at … no still water in
// view"), fill_bucket ("nothing filled in 25 aims"), use_at ("the bucket
// had no visible effect"), a procedure "NOT STARTED", "you carry no
// bucket", go_to "is blocked"/"stalled … blocks short"; the Luanti run's
// go_to and collect_drops ("blocked: no progress for 3 s, 5.9 blocks
// short", "blocked 2 blocks from the drops"), mine_ahead ("the block did
// not break in 8 s") and look_at ("facing the block but the crosshair hits
// leaves"). A zero count collected is matched by zeroCollected.
var aimFailedWords = []string{"no trunk detected", "nothing broke", "chop stopped early", "no still water", "nothing filled",
	"no visible effect", "not started", "you carry no", "blocked", "stalled", "blocks short", "no progress",
	"did not break", "but the crosshair hits"}

// zeroCollected matches "0 log(s) collected", "0 items picked up".
var zeroCollected = regexp.MustCompile(`(^|[^0-9.])0 [a-z_]+(\(s\))? (collected|picked up|placed|obtained)`)

// notePrefix is a note's leading "name:" or "name(": the procedure (or
// the governor) that wrote it.
// ("procedure 'scan_around' not started" is scan_around's).
var notePrefix = regexp.MustCompile(`^(?:procedure '([a-z0-9_]+)'|([a-z][a-z0-9_]*)[:(])`)

// ownNotes are the notes written by call itself: those without a leading
// "name:"/"name(" of another procedure or of the governor (a plan's notes
// mix those of the calls the runner dropped or ran before).
func ownNotes(call string, notes []string) []string {
	var out []string
	for _, n := range notes {
		n = strings.ToLower(strings.TrimSpace(n))
		if n == "" {
			continue
		}
		if m := notePrefix.FindStringSubmatch(n); m != nil && m[1]+m[2] != call {
			continue
		}
		out = append(out, n)
	}
	return out
}

// aimFailure returns the first of notes that says the call failed its
// aim, clipped, or "".
func aimFailure(notes []string) string {
	for _, n := range notes {
		if anyWord(n, aimFailedWords) || zeroCollected.MatchString(n) {
			return clip(n, 100)
		}
	}
	return ""
}

// Notes naming an item as collected or obtained: "4 log(s) collected",
// "water_bucket +1", "broke tree", "picked up 3 tree".
var (
	collectedRe = regexp.MustCompile(`([1-9][0-9]*) ([a-z_]+?)(\(s\)|s)? (collected|picked up|obtained)`)
	gainedRe    = regexp.MustCompile(`([a-z][a-z0-9_]*) \+[1-9]`)
	brokeRe     = regexp.MustCompile(`: broke ([a-z][a-z0-9_]*)`)
	pickedRe    = regexp.MustCompile(`picked up [0-9]+ ([a-z][a-z0-9_]*)`)
)

// aimNonItems are words the patterns catch that name no item.
var aimNonItems = map[string]bool{"item": true, "items": true, "use_item": true, "nothing": true, "health": true}

// aimedItems are the items a call aimed at — an argument item=, block=,
// target= (mine_ahead(block=tree), collect_drops(item=tree)), or a count
// argument naming one (harvest_tree(logs=4), chop_tree(until_logs=1):
// log) — and those its own notes name as collected or obtained. Sorted.
func aimedItems(args map[string]any, own []string) []string {
	set := map[string]bool{}
	for k, v := range args {
		switch k {
		case "item", "block", "target":
			if s, ok := v.(string); ok && s != "" {
				set[strings.ToLower(s)] = true
			}
		default:
			if _, ok := v.(float64); ok {
				name := strings.TrimPrefix(k, "until_")
				if singular, ok := strings.CutSuffix(name, "s"); ok && len(singular) > 1 && singular != "step" && singular != "tick" {
					set[singular] = true
				}
			}
		}
	}
	for _, n := range own {
		for _, m := range collectedRe.FindAllStringSubmatch(n, -1) {
			set[m[2]] = true
		}
		for _, re := range []*regexp.Regexp{gainedRe, brokeRe, pickedRe} {
			for _, m := range re.FindAllStringSubmatch(n, -1) {
				set[m[1]] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for k := range set {
		if !aimNonItems[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// itemAimed reports whether item is one of aimed: the same name, or a
// kind of it (oak_log for log).
func itemAimed(item string, aimed []string) bool {
	for _, a := range aimed {
		if item == a || strings.HasSuffix(item, "_"+a) {
			return true
		}
	}
	return false
}

var missingToolWords = []string{"missing tool", "no tool", "requires a", "need a pickaxe", "without a pickaxe", "not in inventory", "no pickaxe", "missing item", "not enough"}

// missingCount is the craft atoms' "missing 2 stick" (the game's and the sim's).
var missingCount = regexp.MustCompile(`\bmissing \d+ [a-z]`)

func missingTool(text string) bool {
	return anyWord(text, missingToolWords) || missingCount.MatchString(text)
}

func anyWord(text string, words []string) bool {
	for _, w := range words {
		if strings.Contains(text, w) {
			return true
		}
	}
	return false
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }

func sortedKeys(m map[string]int) []string {
	k := make([]string, 0, len(m))
	for x := range m {
		k = append(k, x)
	}
	sort.Strings(k)
	return k
}
