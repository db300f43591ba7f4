package consolidate

import (
	"strconv"
	"strings"

	"github.com/mfm-project/mfm/episodes"
)

// Where an episode's subgoal z comes from (Feedback.SubgoalSource), in
// the order CheckSuccess tries them (docs/CONSOLIDATE.md, "The subgoal
// and its check").
const (
	SubgoalMilestone = "milestone" // the task's milestone, reached in the post-state
	SubgoalPlan      = "plan"      // the plan's declared goal (action.json "goal")
	SubgoalPurpose   = "purpose"   // the atom's own purpose, a predicate on pre- and post-state
	SubgoalFallback  = "fallback"  // no predicate known for the call: no failure diagnosed
)

// FailSubgoalUnmet is the failure type of an episode whose subgoal check
// failed (y = 0) while no more specific failure was diagnosed.
const FailSubgoalUnmet = "SUBGOAL_UNMET"

// purpose is an atom's purpose as a verifiable predicate: what it is for
// and the check on the episode's feedback (Δv, Δs, its own notes) and
// its two end states.
type purpose struct {
	what  string
	check func(f *Feedback, tr trace) bool
}

// purposes is the table of atoms' purposes, by call name. A raw key
// combination ("forward+jump") is checked as movement when one of its
// keys moves, as the attack when it attacks. Items a gathering atom aims
// at by default are in defaultAims.
var purposes = map[string]purpose{}

func init() {
	gather := purpose{"an item it aimed at was gained", gainedAimed}
	breakBlock := purpose{"a block broke or an item was gained", func(f *Feedback, tr trace) bool {
		return f.AimFailed == "" && (has(f.Changed, ChangeWorld) || gainedAny(f))
	}}
	reach := purpose{"reached its target: moved and not blocked", func(f *Feedback, tr trace) bool {
		return f.AimFailed == "" && f.Failure != FailNavStuck && (f.Arrived || has(f.Changed, ChangePosition))
	}}
	move := purpose{"the position changed", func(f *Feedback, tr trace) bool {
		return f.Failure != FailNavStuck && has(f.Changed, ChangePosition)
	}}
	look := purpose{"the view turned (or already faced the target)", func(f *Feedback, tr trace) bool {
		return f.AimFailed == "" && (f.Arrived || has(f.Changed, ChangeCamera))
	}}
	openGUI := purpose{"a GUI is open in the post-state", func(f *Feedback, tr trace) bool { return guiAfter(f, tr) }}
	closeGUI := purpose{"no GUI is open in the post-state", func(f *Feedback, tr trace) bool { return !guiAfter(f, tr) }}
	hold := purpose{"the held item changed (or was already held)", func(f *Feedback, tr trace) bool {
		return f.AimFailed == "" && (f.Arrived || has(f.Changed, ChangeMainhand) || f.Failure == FailNone)
	}}
	consume := purpose{"an item was used up", func(f *Feedback, tr trace) bool { return lostAny(f) }}
	place := purpose{"a block was placed: the world changed or an item was used up", func(f *Feedback, tr trace) bool {
		return f.AimFailed == "" && (has(f.Changed, ChangeWorld) || lostAny(f))
	}}
	shuffle := purpose{"the inventory changed", func(f *Feedback, tr trace) bool { return has(f.Changed, ChangeInventory) }}
	use := purpose{"an effect: the inventory, world, GUI or a milestone changed", func(f *Feedback, tr trace) bool {
		return f.AimFailed == "" && (has(f.Changed, ChangeInventory) || has(f.Changed, ChangeWorld) || has(f.Changed, ChangeGUI) || has(f.Changed, ChangeMilestone))
	}}
	for _, c := range []string{"harvest_tree", "chop_tree", "collect_drops", "fetch_water", "fill_bucket", "furnace_take", "craft"} {
		purposes[c] = gather
	}
	for _, c := range []string{"attack", "mine_ahead", "dig_down", "mine", "dig"} {
		purposes[c] = breakBlock
	}
	for _, c := range []string{"go_to", "travel"} {
		purposes[c] = reach
	}
	for _, c := range []string{"forward", "back", "left", "right", "jump", "sneak", "sprint", "pillar_up"} {
		purposes[c] = move
	}
	for _, c := range []string{"camera", "look", "look_at", "look_abs", "turn", "turn_to", "scan_around", "aim_at_tree", "aim_speckles"} {
		purposes[c] = look
	}
	for c := range guiOpeners {
		purposes[c] = openGUI
	}
	purposes["close_inventory"] = closeGUI
	for _, c := range []string{"equip_hotbar", "select"} {
		purposes[c] = hold
	}
	for _, c := range []string{"eat", "furnace_load"} {
		purposes[c] = consume
	}
	purposes["place_at"] = place
	for _, c := range []string{"stow_items", "drop_and_pickup"} {
		purposes[c] = shuffle
	}
	for _, c := range []string{"use", "use_at", "use_held", "use_on_entity"} {
		purposes[c] = use
	}
}

// guiOpeners are the atoms whose purpose is to open a GUI: a GUI open
// after them is their success, never a GUI failure.
var guiOpeners = map[string]bool{"open_inventory": true, "place_and_open": true}

// defaultAims are the items a gathering atom is for when neither its
// arguments nor its notes name one (harvest_tree(logs=4) names log).
var defaultAims = map[string][]string{
	"harvest_tree": {"log", "tree", "wood"},
	"chop_tree":    {"log", "tree", "wood"},
	"fetch_water":  {"water_bucket"},
	"fill_bucket":  {"water_bucket"},
}

// purposeOf returns the purpose of call, a raw key combination by its
// keys (attack first, then movement, then the camera).
func purposeOf(call string) (purpose, bool) {
	if p, ok := purposes[call]; ok {
		return p, true
	}
	keys := strings.Split(call, "+")
	if len(keys) < 2 {
		return purpose{}, false
	}
	for _, want := range []string{"attack", "forward", "back", "left", "right", "jump", "camera", "use"} {
		for _, k := range keys {
			if k == want {
				return purposes[want], true
			}
		}
	}
	return purpose{}, false
}

// CheckSuccess is the paper's y = CheckSuccess(z, s_post) for an episode
// whose Monitor fields (Changed, InvDelta, Milestones, AimFailed, Aimed,
// Failure) are set: the first rule that applies gives the subgoal and
// its check — a milestone reached in the post-state (y = 1), the plan's
// declared goal checked on the post-state, the call's purpose (the
// purposes table), else "no failure diagnosed". It returns y, the
// subgoal's source and a readable statement of the check.
func CheckSuccess(f *Feedback, goal string, tr trace) (bool, string, string) {
	if len(f.Milestones) > 0 {
		return true, SubgoalMilestone, "milestone " + f.Milestones[len(f.Milestones)-1] + " reached"
	}
	if goal = strings.TrimSpace(goal); goal != "" {
		if y, ok := checkGoal(f, goal, tr); ok {
			return y, SubgoalPlan, goal
		}
	}
	if p, ok := purposeOf(f.Call); ok {
		return p.check(f, tr), SubgoalPurpose, f.Call + ": " + p.what
	}
	return f.Failure == FailNone, SubgoalFallback, "no failure diagnosed (no purpose known for " + f.Call + ")"
}

// checkGoal checks a plan's declared goal on the post-state: "milestone
// NAME", "inv_ge ITEM N", "gui_open true|false", or an item name (a gain
// of it). ok is false for a goal of another form.
func checkGoal(f *Feedback, goal string, tr trace) (y, ok bool) {
	w := strings.Fields(goal)
	switch {
	case len(w) == 2 && w[0] == "milestone":
		return has(f.Milestones, w[1]) || tr.end != nil && hasMilestone(tr.end, w[1]), true
	case len(w) == 3 && w[0] == "inv_ge":
		n, err := strconv.Atoi(w[2])
		if err != nil {
			return false, false
		}
		return postCount(f, tr, w[1]) >= n, true
	case len(w) == 2 && w[0] == "gui_open":
		return guiAfter(f, tr) == (w[1] == "true"), true
	case len(w) == 1:
		for k, v := range f.InvDelta {
			if v > 0 && itemAimed(k, []string{w[0]}) {
				return true, true
			}
		}
		return false, true
	}
	return false, false
}

// postCount is how many of item the post-state holds: its inventory when
// recorded, else the pre-state's plus Δv.
func postCount(f *Feedback, tr trace, item string) int {
	if tr.end != nil && tr.end.Inventory != nil {
		return tr.end.Inventory[item]
	}
	n := f.InvDelta[item]
	if tr.start != nil {
		n += tr.start.Inventory[item]
	}
	return n
}

func hasMilestone(s *episodes.State, m string) bool { return has(s.Milestones, m) }

// guiAfter reports whether a GUI is open in the post-state: the end
// state's gui_open when recorded, else the episode's gui tag.
func guiAfter(f *Feedback, tr trace) bool {
	if tr.end != nil && tr.end.GUIOpen != nil {
		return *tr.end.GUIOpen
	}
	return f.GUIOpen
}

// gainedAimed: an item the call aimed at (its arguments, its notes, or
// its default aims) was gained, and its own notes do not say it failed.
// A call that names no aim is satisfied by any gain.
func gainedAimed(f *Feedback, tr trace) bool {
	if f.AimFailed != "" {
		return false
	}
	aims := append(append([]string(nil), f.Aimed...), defaultAims[f.Call]...)
	for k, v := range f.InvDelta {
		if v > 0 && (len(aims) == 0 || itemAimed(k, aims)) {
			return true
		}
	}
	return false
}

func gainedAny(f *Feedback) bool {
	for _, v := range f.InvDelta {
		if v > 0 {
			return true
		}
	}
	return false
}

func lostAny(f *Feedback) bool {
	for _, v := range f.InvDelta {
		if v < 0 {
			return true
		}
	}
	return false
}

func has(xs []string, x string) bool { return contains(xs, x) }
