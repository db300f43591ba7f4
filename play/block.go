package play

import (
	"fmt"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/harness"
	"github.com/mfm-project/mfm/task"
)

// blockBuilder collects what a turn did for its block.
type blockBuilder struct {
	turn      *TurnRecord
	before    harness.State
	plan      []string
	actions   []string
	events    []string
	notes     []string
	reached   []task.Reached
	episodes  []string
	summaries map[string]string
	memory    []string // the [MEMORY] section (adaptor.go)
}

func (b *blockBuilder) action(rec EntryRecord) {
	line := fmt.Sprintf("[ACTION] %s -> %s", rec.Entry, strings.ToUpper(rec.Outcome))
	if rec.Outcome == "ok" {
		line = fmt.Sprintf("[ACTION] %s -> ok", rec.Entry)
	}
	if rec.Note != "" {
		line += ": " + rec.Note
	}
	if rec.Outcome != "refused" {
		line += fmt.Sprintf(" (%d steps", rec.Steps)
		if len(rec.Episodes) > 0 {
			line += ", " + strings.Join(rec.Episodes, " ")
		}
		line += ")"
	}
	b.actions = append(b.actions, line)
}

func (b *blockBuilder) dropped(rest []step, why string) {
	for _, sp := range rest {
		rec := EntryRecord{Entry: sp.entry.String(), Outcome: "dropped", Note: why}
		b.turn.Entries = append(b.turn.Entries, rec)
		b.actions = append(b.actions, fmt.Sprintf("[ACTION] %s -> DROPPED: %s", rec.Entry, why))
	}
}

// renderBlock is the turn block the agent reads.
func (s *Session) renderBlock(b *blockBuilder, st harness.State) string {
	var w strings.Builder
	used := s.usedLocked()
	left := s.run.Budget - used
	if left < 0 {
		left = 0
	}
	fmt.Fprintf(&w, "[TURN] %s | step %d | %d of %d steps used, %d left | plan cap %d\n", b.turn.ID, st.Step, used, s.run.Budget, left, s.run.PlanCap)
	for _, p := range b.plan {
		fmt.Fprintf(&w, "[PLAN] %s\n", p)
	}
	for _, a := range b.actions {
		fmt.Fprintln(&w, a)
	}
	fmt.Fprintf(&w, "[STATE] %s\n", stateLine(st))
	if d := invDelta(b.before.Inventory, st.Inventory); d != "" {
		fmt.Fprintf(&w, "[INV] %s\n", d)
	}
	fmt.Fprintf(&w, "[INV] now: %s\n", invLine(st.Inventory))
	for _, e := range collapse(b.events, maxEventLines) {
		fmt.Fprintf(&w, "[EVENT] %s\n", e)
	}
	for _, r := range b.reached {
		fmt.Fprintf(&w, "[EVENT] MILESTONE %s reached at step %d (%s)\n", r.Name, r.Step, r.When)
	}
	for _, n := range b.notes {
		fmt.Fprintf(&w, "[NOTE] %s\n", n)
	}
	for _, m := range b.memory {
		fmt.Fprintln(&w, m)
	}
	if ent := entombed(st); ent != "" {
		fmt.Fprintf(&w, "[NOTE] %s\n", ent)
	}
	tod, ok := st.Extra["time_of_day"].(float64)
	if warn := nightWarning(tod, ok); warn != "" {
		fmt.Fprintf(&w, "[WARN] %s\n", warn)
	}
	if h, _ := st.Extra["hazard"].(string); h != "" {
		fmt.Fprintf(&w, "[WARN] %s\n", h)
	}
	s.goalLines(&w)
	if len(b.episodes) > 0 {
		fmt.Fprintf(&w, "[EPISODES] %s\n", strings.Join(b.episodes, " "))
	}
	if s.lastFrame != "" && !s.opt.NoObservations {
		fmt.Fprintf(&w, "[FRAME] %s\n", s.lastFrame)
	}
	if len(s.recent) > 0 {
		fmt.Fprintln(&w, "[RECENT]")
		rec := s.recent
		if len(rec) > 5 {
			rec = rec[len(rec)-5:]
		}
		for _, r := range rec {
			note := r.Note
			if len(note) > 100 {
				note = note[:100] + "…"
			}
			fmt.Fprintf(&w, "  %s -> %s %s\n", r.Entry, r.Outcome, note)
		}
	}
	if !s.opt.Flat {
		s.mapLines(&w, st)
	}
	s.ownLines(&w)
	switch s.run.Termination {
	case EndRunning:
	case EndDone:
		fmt.Fprintln(&w, "[END] every milestone reached: the task is done")
	case EndBudget:
		fmt.Fprintln(&w, "[END] the step budget is spent")
	default:
		fmt.Fprintf(&w, "[END] %s %s\n", s.run.Termination, s.run.Error)
	}
	if s.run.Termination == EndDone || s.run.Termination == EndBudget {
		fmt.Fprintf(&w, "[END] %s\n", s.notesNow())
	}
	return w.String()
}

// goalLines prints progress: reached milestones and what is next (only
// the next one for an ordered task).
func (s *Session) goalLines(w *strings.Builder) {
	var got []string
	for _, m := range s.run.Milestones {
		if m.Reached {
			got = append(got, fmt.Sprintf("%s@%d", m.Name, m.Step))
		}
	}
	pend := s.tracker.Pending()
	fmt.Fprintf(w, "[GOALS] %d of %d reached", len(got), len(s.run.Milestones))
	if len(got) > 0 {
		fmt.Fprintf(w, ": %s", strings.Join(got, ", "))
	}
	fmt.Fprintln(w)
	if len(pend) == 0 {
		return
	}
	show := pend
	if s.opt.Task.Ordered {
		show = pend[:1]
	}
	for _, m := range show {
		hint := ""
		if m.Hint != "" {
			hint = " -- " + m.Hint
		}
		fmt.Fprintf(w, "[GOAL] %s: %s%s\n", m.Name, m.When, hint)
	}
	if n := len(pend) - len(show); n > 0 {
		fmt.Fprintf(w, "[GOAL] %d further goal(s), not yet disclosed\n", n)
	}
}

func stateLine(st harness.State) string {
	var b strings.Builder
	fmt.Fprintf(&b, "pos=(%.1f, %.1f, %.1f) yaw=%.0f pitch=%.0f health=%g", st.X, st.Y, st.Z, st.Yaw, st.Pitch, st.Health)
	if v, ok := st.Extra["vitals"].(map[string]any); ok {
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if k != "health" {
				fmt.Fprintf(&b, " %s=%v", k, v[k])
			}
		}
	}
	for _, k := range []string{"mainhand", "pointed", "below", "head", "time_of_day"} {
		if v, ok := st.Extra[k]; ok && v != nil && v != "" {
			fmt.Fprintf(&b, " %s=%v", k, v)
		}
	}
	if st.GUIOpen {
		b.WriteString(" gui=open")
	}
	return b.String()
}

// entombed is a note when the state says the head is inside a block.
func entombed(st harness.State) string {
	for _, k := range []string{"entombed", "head_in_block"} {
		if v, ok := st.Extra[k]; ok && v != nil && v != false && v != "" {
			return fmt.Sprintf("your head is inside a block (%v): the view is blind; dig out (dig_out) before anything else", v)
		}
	}
	return ""
}

func invLine(inv map[string]int) string {
	keys := make([]string, 0, len(inv))
	for k, v := range inv {
		if v != 0 {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return "(empty)"
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, inv[k])
	}
	return strings.Join(parts, ", ")
}

func invDelta(a, b map[string]int) string {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var names []string
	for k := range keys {
		if a[k] != b[k] {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%+d %s", b[k]-a[k], k)
	}
	return strings.Join(parts, ", ")
}

// maxEventLines is how many [EVENT] lines a turn block shows; the
// earlier ones are summarised by kind and item, so no item name is lost.
const maxEventLines = 24

// collapse merges repeated lines ("(x3)") and keeps the last max; the
// lines left out are counted by their first two words ("mine_block
// stone", "pick_up coal_lump"), so what they were about stays in the block.
func collapse(lines []string, max int) []string {
	var out []string
	var first []int // the index in lines of each out line's first line
	for i := 0; i < len(lines); {
		j := i
		for j < len(lines) && lines[j] == lines[i] {
			j++
		}
		if j-i > 1 {
			out = append(out, fmt.Sprintf("%s (x%d)", lines[i], j-i))
		} else {
			out = append(out, lines[i])
		}
		first = append(first, i)
		i = j
	}
	if len(out) > max {
		cut := len(out) - max
		out = append([]string{leftOut(lines[:first[cut]])}, out[cut:]...)
	}
	return out
}

// leftOut summarises event lines by their first two words, in order of
// first appearance: "(19 earlier events: mine_block stone x15,
// mine_block iron_ore x2, pick_up coal_lump x2)".
func leftOut(lines []string) string {
	var keys []string
	count := map[string]int{}
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) > 2 {
			f = f[:2]
		}
		k := strings.Join(f, " ")
		if count[k] == 0 {
			keys = append(keys, k)
		}
		count[k]++
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s x%d", k, count[k])
	}
	return fmt.Sprintf("(%d earlier events: %s)", len(lines), strings.Join(parts, ", "))
}

// gridSummary keeps what the runner knows for certain from this life's
// grid.jsonl: cells walked, blocked, placed, hazards.
type gridSummary struct {
	walked  map[[2]int]bool
	blocked map[[3]int]bool
	placed  map[[3]int]string
	hazards []episodes.GridRow
}

func (g *gridSummary) add(r episodes.GridRow) {
	if g.walked == nil {
		g.walked, g.blocked, g.placed = map[[2]int]bool{}, map[[3]int]bool{}, map[[3]int]string{}
	}
	switch r.Kind {
	case "walked":
		g.walked[[2]int{r.Cell[0], r.Cell[2]}] = true
	case "blocked":
		g.blocked[r.Cell] = true
	case "placed":
		g.placed[r.Cell] = r.Item
	case episodes.CellHazard:
		g.hazards = append(g.hazards, r)
	}
}

func (s *Session) collectGrid() {
	off, err := episodes.ReadGrid(s.life.GridPath(), s.gridOff, func(g episodes.GridRow) error { s.grid.add(g); return nil }, nil)
	if err == nil {
		s.gridOff = off
	} else if !os.IsNotExist(err) {
		s.opt.Logger.Debug("play: read grid", "err", err)
	}
}

func (s *Session) mapLines(w *strings.Builder, st harness.State) {
	g := &s.grid
	fmt.Fprintf(w, "[MAP] this life: %d cells walked, %d blocked, %d placed, %d hazard(s)\n", len(g.walked), len(g.blocked), len(g.placed), len(g.hazards))
	near := 0
	for c := range g.blocked {
		if math.Hypot(float64(c[0])-st.X, float64(c[2])-st.Z) <= 4 {
			near++
		}
	}
	if near > 0 {
		fmt.Fprintf(w, "[MAP] %d blocked cell(s) within 4 blocks\n", near)
	}
	hz := append([]episodes.GridRow(nil), g.hazards...)
	dist := func(r episodes.GridRow) float64 {
		return math.Hypot(float64(r.Cell[0])-st.X, float64(r.Cell[2])-st.Z)
	}
	sort.Slice(hz, func(i, j int) bool { return dist(hz[i]) < dist(hz[j]) })
	for i, r := range hz {
		if i == 3 {
			break
		}
		cause := r.Cause
		if cause == "" {
			cause = "hazard"
		}
		fmt.Fprintf(w, "[MAP] hazard %s at %d,%d,%d, %.0f blocks away (%s)\n", cause, r.Cell[0], r.Cell[1], r.Cell[2], dist(r), r.Episode)
	}
}

// ownLines is the paper's [OWN]: the agent's reflexes and how often each
// fired in this run.
func (s *Session) ownLines(w *strings.Builder) {
	procs, _, err := harness.ListProcedures(s.opt.Store.Path(episodes.MineDir, "reflexes"), harness.KindReflex)
	if err != nil || len(procs) == 0 {
		return
	}
	parts := make([]string, len(procs))
	for i, p := range procs {
		parts[i] = fmt.Sprintf("%s (fired %d)", p.Name, s.fired[p.Name])
		if p.IsDisabled() {
			parts[i] += " disabled"
		}
	}
	fmt.Fprintf(w, "[OWN] reflexes: %s\n", strings.Join(parts, ", "))
}
