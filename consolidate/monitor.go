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
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mfm-project/mfm/episodes"
)

// Failure types of the Monitor's taxonomy (docs/CONSOLIDATE.md).
const (
	FailNone        = ""
	FailDeath       = "DEATH"        // health reached 0 or a death event
	FailDamage      = "DAMAGE"       // health fell
	FailNavStuck    = "NAV_STUCK"    // movement attempted, < 0.5 blocks moved (stuck tag)
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
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{LambdaX: 0.4, LambdaV: 0.4, LambdaG: 0.2, EpsX: 1, EpsV: 1, EpsP: 0.1, H: 5, Eta: 0.6, MinRun: 2}
}

// Feedback is the Monitor's typed feedback for one episode.
type Feedback struct {
	Life       int            `json:"life"`
	Episode    string         `json:"episode"`
	FirstStep  int64          `json:"first_step"`
	LastStep   int64          `json:"last_step"`
	Subgoal    string         `json:"subgoal,omitempty"` // goals.next of the start state, when recorded
	Call       string         `json:"call"`              // action_kind (procedure or raw keys)
	Success    bool           `json:"success"`
	Verified   bool           `json:"verified"` // success shown by a milestone or an inventory gain
	Moved      float64        `json:"moved"`
	Pos        [3]float64     `json:"pos"`
	InvDelta   map[string]int `json:"inventory_delta"`
	Milestones []string       `json:"milestones"`
	Failure    string         `json:"failure"`
	Progress   float64        `json:"progress"`
	Stagnant   bool           `json:"stagnant"`
	GUIOpen    bool           `json:"gui_open"`
	Previous   bool           `json:"previous,omitempty"` // the episode is in a frozen previous life
}

func (f Feedback) ref() Ref { return Ref{Life: f.Life, ID: f.Episode, Previous: f.Previous} }

// rowExtra are index-row fields that Row does not decode.
type rowExtra struct {
	InventoryDelta map[string]int `json:"inventory_delta"`
}

type outcomeFile struct {
	Moved          *float64       `json:"moved"`
	InventoryDelta map[string]int `json:"inventory_delta"`
	Milestones     []string       `json:"milestone_transition"`
	Notes          []string       `json:"notes"`
	Events         []string       `json:"events"`
	Tags           []string       `json:"tags"`
}

type stateFile struct {
	Goals struct {
		Next string `json:"next"`
	} `json:"goals"`
	Inventory map[string]int `json:"inventory"`
}

// Monitor derives feedback for every episode of every life of s, oldest first.
func Monitor(s *episodes.Store, cfg Config) ([]Feedback, error) {
	lives, err := s.Lives()
	if err != nil {
		return nil, fmt.Errorf("monitor: %w", err)
	}
	var out []Feedback
	for _, l := range lives {
		rows, err := l.AllRows()
		if err != nil {
			return nil, fmt.Errorf("monitor life %d: %w", l.N, err)
		}
		for i, r := range rows {
			if r.Kind == "initial" {
				continue
			}
			var next *episodes.Row
			if i+1 < len(rows) {
				next = &rows[i+1]
			}
			out = append(out, feedbackOf(l, r, next, cfg))
		}
	}
	return out, nil
}

func feedbackOf(l episodes.Life, r episodes.Row, next *episodes.Row, cfg Config) Feedback {
	f := Feedback{Life: l.N, Episode: r.ID, FirstStep: r.FirstStep, LastStep: r.LastStep, Call: r.Action(),
		Pos: [3]float64{r.X, r.Y, r.Z}, Previous: !l.Current, InvDelta: map[string]int{}, Milestones: []string{}}
	var ex rowExtra
	_ = json.Unmarshal(r.Raw, &ex)
	for k, v := range ex.InventoryDelta {
		f.InvDelta[k] = v
	}
	tags := append([]string(nil), r.Tags...)
	text := strings.ToLower(r.Note + " " + strings.Join(r.Events, " "))
	dir := filepath.Join(l.Root, filepath.FromSlash(r.Path))
	var oc outcomeFile
	if b, err := os.ReadFile(filepath.Join(dir, "outcome.json")); err == nil && json.Unmarshal(b, &oc) == nil {
		for k, v := range oc.InventoryDelta {
			f.InvDelta[k] = v
		}
		f.Milestones = append(f.Milestones, oc.Milestones...)
		if oc.Moved != nil {
			f.Moved = *oc.Moved
		}
		tags = append(tags, oc.Tags...)
		text += " " + strings.ToLower(strings.Join(oc.Notes, " ")+" "+strings.Join(oc.Events, " "))
	} else if next != nil {
		f.Moved = math.Round(math.Hypot(next.X-r.X, next.Z-r.Z)*100) / 100
	}
	var st stateFile
	if b, err := os.ReadFile(filepath.Join(dir, "state", "state.json")); err == nil && json.Unmarshal(b, &st) == nil {
		f.Subgoal = st.Goals.Next
	}
	for _, e := range r.Events {
		if m, ok := strings.CutPrefix(e, "MILESTONE "); ok {
			m = strings.TrimSuffix(m, " verified")
			if !contains(f.Milestones, m) {
				f.Milestones = append(f.Milestones, m)
			}
		}
	}
	has := func(t string) bool { return contains(tags, t) }
	f.GUIOpen = has("gui")
	gain := 0
	for _, v := range f.InvDelta {
		if v > 0 {
			gain += v
		}
	}
	switch {
	case has("death"):
		f.Failure = FailDeath
	case has("damage"):
		f.Failure = FailDamage
	case has("stuck"):
		f.Failure = FailNavStuck
	case missingTool(text):
		f.Failure = FailMissingTool
	case f.GUIOpen && len(f.InvDelta) == 0 && len(f.Milestones) == 0:
		f.Failure = FailGUI
	case f.Moved < 0.5 && len(f.InvDelta) == 0 && len(f.Milestones) == 0:
		f.Failure = FailNoEffect
	}
	f.Verified = len(f.Milestones) > 0 || gain > 0
	f.Success = f.Failure == FailNone
	// Progress: p = λx·Var(x)/(εx+Var(x)) + λv·|Δv|₁/(εv+|Δv|₁) + λg·p_goal, with
	// Var(x) the variance of the start and end positions (= (moved/2)², summed over x,z).
	varX := (f.Moved / 2) * (f.Moved / 2)
	dv := 0.0
	for _, v := range f.InvDelta {
		dv += math.Abs(float64(v))
	}
	pg := 0.0
	if len(f.Milestones) > 0 {
		pg = 1
	}
	f.Progress = round3(cfg.LambdaX*varX/(cfg.EpsX+varX) + cfg.LambdaV*dv/(cfg.EpsV+dv) + cfg.LambdaG*pg)
	f.Stagnant = f.Progress < cfg.EpsP && !f.Success
	return f
}

var missingToolWords = []string{"missing tool", "no tool", "requires a", "need a pickaxe", "without a pickaxe", "not in inventory", "no pickaxe", "missing item", "not enough"}

func missingTool(text string) bool {
	for _, w := range missingToolWords {
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
