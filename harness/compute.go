package harness

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/mfm-project/mfm/episodes"
)

// episode is the recorder's buffer for the episode being recorded.
type episode struct {
	id         string
	call       Call
	initial    bool
	start      State
	hasStart   bool
	startFrame []byte
	steps      []Step
	eventBytes int // the steps' event lines together (MaxEpisodeEventBytes)
	notes      []string
	frames     []frameRec
	proc       *procCall // opened by BeginProcedure
	// prevLast and prevFrame are the recorder's latest state and frame
	// when the episode began: Abort goes back to them.
	prevLast  *State
	prevFrame []byte
}

type frameRec struct {
	step int64
	png  []byte
}

// Outcome is what an episode changed, computed from its recorded states.
// It is written as outcome.json.
type Outcome struct {
	FirstStep      int64
	LastStep       int64
	Ticks          int64 // steps recorded
	Moved          float64
	Descended      float64
	InventoryDelta map[string]int
	Events         []string
	Milestones     []string // the milestone transition
	Damage         float64  // health lost over the episode (sum of drops)
	Died           bool
	Stuck          bool
	Tags           []string
	Notes          []string
	End            State
}

// Compute derives the outcome of an episode from its start state, its
// steps and its notes. opt supplies the stuck threshold and move kinds.
func Compute(call Call, start State, steps []Step, notes []string, opt Options) Outcome {
	if opt.StuckBelow <= 0 {
		opt.StuckBelow = 0.5
	}
	end := start
	if len(steps) > 0 {
		end = steps[len(steps)-1].State
	}
	o := Outcome{FirstStep: start.Step, LastStep: end.Step, Ticks: int64(len(steps)), End: end, Notes: notes}
	o.Moved = math.Hypot(end.X-start.X, end.Z-start.Z)
	o.Descended = start.Y - end.Y
	o.InventoryDelta = invDelta(start.Inventory, end.Inventory)

	moving := slices.Contains(opt.MoveKinds, call.Kind) || isMoveAction(call.Raw)
	maxDisp := 0.0
	prevHealth := start.Health
	var eventTags []string
	for _, s := range steps {
		o.Events = append(o.Events, s.Events...)
		if isMoveAction(s.Action) {
			moving = true
		}
		maxDisp = max(maxDisp, math.Hypot(s.State.X-start.X, s.State.Z-start.Z))
		if s.State.Health < prevHealth {
			o.Damage += prevHealth - s.State.Health
			if s.State.Health <= 0 && prevHealth > 0 {
				o.Died = true
			}
		}
		prevHealth = s.State.Health
		for _, e := range s.Events {
			if t := eventTag(e); t != "" && !slices.Contains(eventTags, t) {
				eventTags = append(eventTags, t)
			}
			if t := eventTag(e); t == "death" {
				o.Died = true
			}
		}
	}
	o.Stuck = moving && len(steps) > 0 && o.Moved < opt.StuckBelow && maxDisp < opt.StuckBelow

	// Milestone transition: new cumulative milestones, then MILESTONE events.
	for _, m := range end.Milestones {
		if !slices.Contains(start.Milestones, m) && !slices.Contains(o.Milestones, m) {
			o.Milestones = append(o.Milestones, m)
		}
	}
	for _, e := range o.Events {
		if m, ok := milestoneEvent(e); ok && !slices.Contains(o.Milestones, m) {
			o.Milestones = append(o.Milestones, m)
		}
	}

	add := func(t string, cond bool) {
		if cond && !slices.Contains(o.Tags, t) {
			o.Tags = append(o.Tags, t)
		}
	}
	o.Tags = []string{}
	add("milestone", len(o.Milestones) > 0)
	add("inventory_changed", len(o.InventoryDelta) > 0)
	add("stuck", o.Stuck)
	add("damage", o.Damage > 0 || slices.Contains(eventTags, "damage"))
	add("death", o.Died)
	add("gui", end.GUIOpen)
	for _, t := range eventTags {
		add(t, true)
	}
	add("note", len(notes) > 0)
	return o
}

// Summary is the index row's one-line summary in the paper's form:
//
//	[ACTION] go_to(x=3170.5,z=1402.5) -> 140 ticks: moved 8.5, descended -0.8, inv {'log': 2}, milestone ['log_1']
//
// descended is shown when |descended| > 0.5, inv when the inventory
// changed, milestone when one was reached.
func Summary(call Call, o Outcome) string {
	var b strings.Builder
	b.WriteString("[ACTION] ")
	b.WriteString(actionHead(call, o.Ticks))
	fmt.Fprintf(&b, ": moved %.1f", o.Moved)
	if math.Abs(o.Descended) > 0.5 {
		fmt.Fprintf(&b, ", descended %.1f", o.Descended)
	}
	if len(o.InventoryDelta) > 0 {
		b.WriteString(", inv ")
		b.WriteString(pyIntDict(o.InventoryDelta))
	}
	if len(o.Milestones) > 0 {
		b.WriteString(", milestone ")
		b.WriteString(pyStrList(o.Milestones))
	}
	return b.String()
}

// actionHead is "go_to(x=1,z=2) -> 140 ticks" or `{"attack":1} x24`.
func actionHead(c Call, ticks int64) string {
	n := c.Budget
	if n == 0 {
		n = ticks
	}
	if c.Kind == "" {
		raw, _ := json.Marshal(c.Raw)
		return fmt.Sprintf("%s x%d", raw, n)
	}
	return fmt.Sprintf("%s -> %d ticks", c.String(), n)
}

// String formats the call as the paper's summaries do: kind(a=1,b=x).
func (c Call) String() string {
	if c.Kind == "" {
		raw, _ := json.Marshal(c.Raw)
		return string(raw)
	}
	var b strings.Builder
	b.WriteString(c.Kind)
	b.WriteByte('(')
	for i, a := range c.Args {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(a.Name)
		b.WriteByte('=')
		b.WriteString(pyStr(a.Value))
	}
	b.WriteByte(')')
	return b.String()
}

func invDelta(a, b map[string]int) map[string]int {
	d := map[string]int{}
	for k, v := range b {
		if v != a[k] {
			d[k] = v - a[k]
		}
	}
	for k, v := range a {
		if _, ok := b[k]; !ok && v != 0 {
			d[k] = -v
		}
	}
	return d
}

var moveKeys = []string{"forward", "back", "left", "right", "jump", "sprint"}

// isMoveAction reports whether a low-level action presses a movement key.
func isMoveAction(a any) bool {
	switch x := a.(type) {
	case map[string]any:
		for _, k := range moveKeys {
			if v, ok := x[k]; ok && truthy(v) {
				return true
			}
		}
	case string:
		return slices.Contains(moveKeys, x)
	}
	return false
}

func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case float64:
		return x != 0
	case int:
		return x != 0
	case int64:
		return x != 0
	case json.Number:
		f, err := x.Float64()
		return err == nil && f != 0
	case string:
		return x != "" && x != "0"
	}
	return true
}

func rawKind(raw map[string]any) string {
	var keys []string
	for k, v := range raw {
		if truthy(v) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		for k := range raw {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return strings.Join(keys, "+")
}

// eventTags maps an event's first word to the tag it gives an episode.
var eventTags = map[string]string{
	"mine_block":  "broke",
	"break_block": "broke",
	"place_block": "placed",
	"place":       "placed",
	"craft_item":  "crafted",
	"smelt_item":  "smelted",
	"open":        "opened",
	"open_block":  "opened",
	"death":       "death",
	"died":        "death",
	"hurt":        "damage",
	"damage":      "damage",
}

func eventTag(e string) string {
	w, _, _ := strings.Cut(strings.TrimSpace(e), " ")
	return eventTags[w]
}

// milestoneEvent parses "MILESTONE name verified".
func milestoneEvent(e string) (string, bool) {
	f := strings.Fields(e)
	if len(f) >= 2 && f[0] == "MILESTONE" {
		return f[1], true
	}
	return "", false
}

// damageCause finds the cause of a health loss in a step's events
// ("hurt lava", "damage fall 3"), or "unknown".
func damageCause(events []string) string {
	for _, e := range events {
		f := strings.Fields(e)
		if len(f) >= 2 && (f[0] == "hurt" || f[0] == "damage") {
			return f[1]
		}
	}
	for _, e := range events {
		for _, c := range []string{"lava", "drown", "fall", "fire", "burn", "starv", "explosion", "attack"} {
			if strings.Contains(strings.ToLower(e), c) {
				return c
			}
		}
	}
	return "unknown"
}

// cellOf is the block a position falls in, as the store's axes say
// (floor, or round for a Luanti store).
func cellOf(ax episodes.Axes, x, y, z float64) [3]int {
	return [3]int{ax.Block(x), ax.Block(y), ax.Block(z)}
}

// frontCell is the cell one block ahead of the pose (Minecraft yaw: 0 faces
// +z, 90 faces -x).
func frontCell(ax episodes.Axes, s State) [3]int {
	rad := s.Yaw * math.Pi / 180
	return cellOf(ax, s.X-math.Sin(rad), s.Y, s.Z+math.Cos(rad))
}

// GridRows derives an episode's grid rows from its steps: walked when the
// agent's cell changes (lastWalked carries over between episodes), blocked
// when a step tried to move and did not, hazard on health loss, and placed
// / opened / other kinds from the steps' explicit cells or events.
func GridRows(id string, call Call, start State, steps []Step, lastWalked *[3]int, opt Options) ([]episodes.GridRow, *[3]int) {
	var rows []episodes.GridRow
	prev := start
	callMoves := slices.Contains(opt.MoveKinds, call.Kind) || isMoveAction(call.Raw)
	var lastBlocked *[3]int
	for _, s := range steps {
		st := s.State
		c := cellOf(opt.Axes, st.X, st.Y, st.Z)
		if lastWalked == nil || *lastWalked != c {
			rows = append(rows, episodes.GridRow{Cell: c, Kind: episodes.CellWalked, Step: st.Step, Episode: id})
			cc := c
			lastWalked = &cc
		}
		given := map[string]bool{} // kinds the harness gave at this step
		for _, x := range s.Cells {
			given[x.Kind] = true
		}
		tried := isMoveAction(s.Action) || (s.Action == nil && callMoves)
		if given[episodes.CellBlocked] {
			// the harness knows the blocked cell: it replaces the derived one
			for _, x := range s.Cells {
				if x.Kind == episodes.CellBlocked {
					fc := [3]int{x.X, x.Y, x.Z}
					lastBlocked = &fc
				}
			}
		} else if tried && math.Hypot(st.X-prev.X, st.Z-prev.Z) < 0.01 {
			fc := frontCell(opt.Axes, st)
			if lastBlocked == nil || *lastBlocked != fc {
				rows = append(rows, episodes.GridRow{Cell: fc, Kind: episodes.CellBlocked, Step: st.Step, Episode: id})
				lastBlocked = &fc
			}
		}
		if st.Health < prev.Health {
			amt := round2(prev.Health - st.Health)
			rows = append(rows, episodes.GridRow{Cell: c, Kind: episodes.CellHazard, Step: st.Step, Amount: &amt, Cause: damageCause(s.Events), Episode: id})
		}
		pose := &episodes.Pose{X: st.X, Y: st.Y, Z: st.Z, Yaw: st.Yaw, Pitch: st.Pitch}
		for _, x := range s.Cells {
			rows = append(rows, episodes.GridRow{Cell: [3]int{x.X, x.Y, x.Z}, Kind: x.Kind, Step: st.Step, Item: x.Item, Pose: pose, Episode: id})
		}
		for _, e := range s.Events {
			f := strings.Fields(e)
			if len(f) < 2 {
				continue
			}
			kind := ""
			switch eventTag(e) {
			case "placed":
				kind = episodes.CellPlaced
			case "opened":
				kind = episodes.CellOpened
			}
			if kind != "" && !given[kind] {
				rows = append(rows, episodes.GridRow{Cell: frontCell(opt.Axes, st), Kind: kind, Step: st.Step, Item: f[1], Pose: pose, Episode: id})
			}
		}
		prev = st
	}
	return rows, lastWalked
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }

// stateJSON is the state.json form of a state, as the paper's harness
// writes it: pos{x,y,z,yaw,pitch}, inventory, vitals{health}, gui_open,
// step, plus Extra at the top level.
func stateJSON(s State) map[string]any {
	m := map[string]any{}
	for k, v := range s.Extra {
		m[k] = v
	}
	inv := map[string]any{}
	for k, v := range s.Inventory {
		inv[k] = v
	}
	m["step"] = s.Step
	m["pos"] = map[string]any{"x": s.X, "y": s.Y, "z": s.Z, "yaw": s.Yaw, "pitch": s.Pitch}
	m["inventory"] = inv
	m["gui_open"] = s.GUIOpen
	vit := map[string]any{}
	if v, ok := m["vitals"].(map[string]any); ok {
		for k, x := range v {
			vit[k] = x
		}
	}
	vit["health"] = s.Health
	m["vitals"] = vit
	if s.Milestones != nil {
		m["milestones"] = s.Milestones
	}
	return m
}

// stateFromRecord is the recorder's form of a recorded state (resume
// after reopen): the fields stateJSON writes, and every other field of the
// object (vitals besides health included) in Extra.
func stateFromRecord(rs *episodes.State) State {
	var s State
	if rs.Step != nil {
		s.Step = *rs.Step
	}
	if p := rs.Pos; p != nil {
		s.X, s.Y, s.Z = p.X, p.Y, p.Z
		if p.Yaw != nil {
			s.Yaw = *p.Yaw
		}
		if p.Pitch != nil {
			s.Pitch = *p.Pitch
		}
	}
	if rs.Inventory != nil {
		s.Inventory = maps.Clone(rs.Inventory)
	}
	if rs.Vitals != nil && rs.Vitals.Health != nil {
		s.Health = *rs.Vitals.Health
	}
	if rs.GUIOpen != nil {
		s.GUIOpen = *rs.GUIOpen
	}
	if len(rs.Milestones) > 0 {
		s.Milestones = slices.Clone(rs.Milestones)
	}
	fields, _ := rs.Fields() // rs decoded, so Raw is an object
	extra := map[string]any{}
	for k, v := range fields {
		switch k {
		case "step", "pos", "inventory", "gui_open", "milestones":
		case "vitals":
			if vm, ok := v.(map[string]any); ok {
				delete(vm, "health")
				if len(vm) > 0 {
					extra[k] = vm
				}
			}
		default:
			extra[k] = v
		}
	}
	if len(extra) > 0 {
		s.Extra = extra
	}
	return s
}

// outcomeJSON is outcome.json: the paper's keys (descended, events,
// inventory_delta, last_step, milestone_transition, moved, notes, tags)
// plus MFM's (first_step, ticks, damage, died, stuck, end_state).
func outcomeJSON(o Outcome) map[string]any {
	inv := map[string]any{}
	for k, v := range o.InventoryDelta {
		inv[k] = v
	}
	var ms any
	if len(o.Milestones) > 0 {
		ms = o.Milestones
	}
	return map[string]any{
		"descended":            round2(o.Descended),
		"events":               nonNil(o.Events),
		"inventory_delta":      inv,
		"last_step":            o.LastStep,
		"first_step":           o.FirstStep,
		"milestone_transition": ms,
		"moved":                round2(o.Moved),
		"notes":                nonNil(o.Notes),
		"tags":                 nonNil(o.Tags),
		"ticks":                o.Ticks,
		"damage":               round2(o.Damage),
		"died":                 o.Died,
		"stuck":                o.Stuck,
		"end_state":            stateJSON(o.End),
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// actionJSON is action.json in the paper's form: entry{procedure, args,
// steps} or entry{action, repeat}, first_step, plus the call's Meta and
// MFM's "call" (the formatted call).
func actionJSON(c Call, firstStep, ticks int64) map[string]any {
	m := map[string]any{}
	for k, v := range c.Meta {
		m[k] = v
	}
	n := c.Budget
	if n == 0 {
		n = ticks
	}
	if c.Kind == "" {
		m["entry"] = map[string]any{"action": c.Raw, "repeat": n}
	} else {
		args := map[string]any{}
		for _, a := range c.Args {
			args[a.Name] = a.Value
		}
		m["entry"] = map[string]any{"procedure": c.Kind, "args": args, "steps": n}
	}
	m["first_step"] = firstStep
	m["call"] = c.String()
	if len(c.Plan) > 0 {
		m["plan_lines"] = c.Plan
	}
	return m
}

const logRule = "================================================================================"

// logBlock is the episode's logs.txt block.
func logBlock(num int64, c Call, o Outcome) string {
	var b strings.Builder
	b.WriteString(logRule + "\n")
	fmt.Fprintf(&b, "Action %d | Step %d", num, o.LastStep)
	for _, h := range c.Header {
		b.WriteString(" | " + oneLine(h))
	}
	b.WriteString("\n\n")
	for _, p := range c.Plan {
		b.WriteString("[PLAN] " + oneLine(p) + "\n")
	}
	b.WriteString("[ACTION] " + actionHead(c, o.Ticks) + "\n")
	b.WriteString(stateLine(o.End, o.Moved) + "\n")
	fmt.Fprintf(&b, "[GUI] open=%s\n", pyBool(o.End.GUIOpen))
	if len(o.InventoryDelta) > 0 {
		keys := sortedKeys(o.InventoryDelta)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s %+d", k, o.InventoryDelta[k])
		}
		b.WriteString("[INV] " + strings.Join(parts, ", ") + "\n")
	}
	for _, e := range o.Events {
		b.WriteString("[EVENT] " + oneLine(e) + "\n")
	}
	for _, n := range o.Notes {
		b.WriteString("[NOTE] " + oneLine(n) + "\n")
	}
	return b.String()
}

func initialLogBlock(st State, task string) string {
	var b strings.Builder
	b.WriteString(logRule + "\n")
	fmt.Fprintf(&b, "Action 0 | Step %d | INITIAL STATE\n\n", st.Step)
	if task != "" {
		b.WriteString("Task: " + oneLine(task) + "\n")
	}
	b.WriteString(stateLine(st, 0) + "\n")
	return b.String()
}

func stateLine(s State, moved float64) string {
	return fmt.Sprintf("[STATE] pos=(%.2f, %.2f, %.2f) pitch=%.0f yaw=%.0f moved=%.2f", s.X, s.Y, s.Z, s.Pitch, s.Yaw, moved)
}

// oneLine folds newlines so a log entry stays one line.
func oneLine(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r", " "), "\n", " ")
}

// commit computes and writes ep.
func (r *Recorder) commit(ep *episode) (episodes.Row, error) {
	num, _ := episodes.ParseEpisodeID(ep.id)
	files := map[string][]byte{}
	put := func(name string, v any) error {
		b, err := episodes.MarshalPyIndent(v)
		if err != nil {
			return fmt.Errorf("episode %s: %s: %w", ep.id, name, err)
		}
		files[name] = b
		return nil
	}
	if err := put(episodes.StateFileName, stateJSON(ep.start)); err != nil {
		return episodes.Row{}, err
	}
	obs := ep.startFrame
	if obs == nil && len(ep.frames) > 0 {
		obs = ep.frames[0].png
	}
	if obs != nil {
		files[episodes.ObservationFileName] = obs
	}
	row := map[string]any{
		"attachment":       nil,
		"observation_hash": nil,
		"first_step":       ep.start.Step,
		"gui_open":         ep.start.GUIOpen,
		"id":               ep.id,
		"image":            episodes.EpisodesDir + "/" + ep.id + "/observation/image.png",
		"path":             episodes.EpisodesDir + "/" + ep.id,
		"x":                ep.start.X,
		"y":                ep.start.Y,
		"z":                ep.start.Z,
		"life":             r.life,
		"time":             r.opt.Clock().UTC().Format("2006-01-02T15:04:05.000Z07:00"),
	}
	var grid []episodes.GridRow
	var logText string
	lastWalked := r.lastWalked
	if ep.initial {
		row["action_kind"] = nil
		row["kind"] = "initial"
		row["last_step"] = ep.start.Step
		row["summary"] = "initial state"
		row["tags"] = []string{"initial"}
		row["events"] = []string{}
		if err := put(episodes.OutcomeFileName, map[string]any{"last_step": ep.start.Step, "notes": []string{}, "tags": []string{"initial"}, "end_state": stateJSON(ep.start)}); err != nil {
			return episodes.Row{}, err
		}
		logText = initialLogBlock(ep.start, r.opt.Task)
	} else {
		o := Compute(ep.call, ep.start, ep.steps, ep.notes, r.opt)
		row["action_kind"] = ep.call.ActionKind()
		row["kind"] = "episode"
		row["last_step"] = o.LastStep
		row["summary"] = Summary(ep.call, o)
		row["tags"] = o.Tags
		row["events"] = nonNil(o.Events)
		if len(o.InventoryDelta) > 0 {
			row["inventory_delta"] = o.InventoryDelta
		}
		if len(o.Notes) > 0 {
			row["note"] = o.Notes[0]
		}
		if err := put(episodes.ActionFileName, actionJSON(ep.call, ep.start.Step, o.Ticks)); err != nil {
			return episodes.Row{}, err
		}
		if err := put(episodes.OutcomeFileName, outcomeJSON(o)); err != nil {
			return episodes.Row{}, err
		}
		grid, lastWalked = GridRows(ep.id, ep.call, ep.start, ep.steps, r.lastWalked, r.opt)
		logText = logBlock(num, ep.call, o)
		if r.opt.Frames {
			var sj []byte
			fi := 0
			for _, s := range ep.steps {
				rec := map[string]any{"step": s.State.Step, "action": s.Action, "state": stateJSON(s.State), "events": nonNil(s.Events)}
				for fi < len(ep.frames) && ep.frames[fi].step < s.State.Step {
					fi++
				}
				if fi < len(ep.frames) && ep.frames[fi].step == s.State.Step {
					rec["frame"] = fmt.Sprintf("frames/%06d.png", s.State.Step)
				}
				b, err := episodes.MarshalPy(rec)
				if err != nil {
					return episodes.Row{}, fmt.Errorf("episode %s: steps.jsonl: %w", ep.id, err)
				}
				sj = append(append(sj, b...), '\n')
			}
			files[episodes.StepsFileName] = sj
			for _, f := range ep.frames {
				files[fmt.Sprintf("frames/%06d.png", f.step)] = f.png
			}
		}
	}
	rowBytes, err := episodes.MarshalPy(row)
	if err != nil {
		return episodes.Row{}, fmt.Errorf("episode %s: index row: %w", ep.id, err)
	}
	gridBytes := make([][]byte, len(grid))
	for i, g := range grid {
		if gridBytes[i], err = g.Marshal(); err != nil {
			return episodes.Row{}, fmt.Errorf("episode %s: grid row: %w", ep.id, err)
		}
	}
	if err := r.w.WriteEpisode(ep.id, episodes.Episode{Files: files, Row: rowBytes, Grid: gridBytes, Log: []byte(logText)}); err != nil {
		return episodes.Row{}, fmt.Errorf("recorder: %w", err)
	}
	r.lastWalked = lastWalked
	parsed, err := episodes.ParseRow(rowBytes)
	if err != nil {
		return episodes.Row{}, fmt.Errorf("episode %s: %w", ep.id, err)
	}
	return parsed, nil
}

// resume picks up the latest state from the store's last episode so the
// next episode starts where the previous one ended.
func (r *Recorder) resume() error {
	life, err := r.w.Store().CurrentLife()
	if err != nil {
		return fmt.Errorf("recorder: %w", err)
	}
	tail, err := episodes.TailRows(life.IndexPath(), 0, 1)
	if err != nil {
		return fmt.Errorf("recorder: %w", err)
	}
	if len(tail) == 0 {
		return nil
	}
	last := &tail[0]
	dir := life.RowDir(last)
	o, err := episodes.ReadOutcome(dir)
	if err != nil {
		return nil // a paper store without outcome: start fresh
	}
	end := o.EndState
	if end == nil {
		if end, err = episodes.ReadState(dir); err != nil {
			return nil
		}
	}
	st := stateFromRecord(end)
	r.last = &st
	c := cellOf(r.opt.Axes, st.X, st.Y, st.Z)
	r.lastWalked = &c
	if fb, err := os.ReadFile(r.w.Store().Path(episodes.NowDir, episodes.NowFrameName)); err == nil {
		r.lastFrame = fb
	}
	return nil
}
