package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/play"
	"gonum.org/v1/gonum/stat"
)

// RecallRadius is how near (in blocks) a new destination must lie to where
// a looked-at episode was recorded to count as a recall target (MFM
// section A.4).
const RecallRadius = 8.0

// Target is a coordinate a plan names (go_to, look_at); HasY is false for
// a horizontal go_to x= z=.
type Target struct {
	Atom    string  `json:"atom"`
	X, Y, Z float64 `json:"-"`
	HasY    bool    `json:"-"`
}

// MarshalJSON writes the target as {"atom", "pos": [x, (y,) z]}.
func (t Target) MarshalJSON() ([]byte, error) {
	pos := []float64{t.X, t.Z}
	if t.HasY {
		pos = []float64{t.X, t.Y, t.Z}
	}
	return json.Marshal(struct {
		Atom string    `json:"atom"`
		Pos  []float64 `json:"pos"`
	}{t.Atom, pos})
}

// block rounds a target to the block it names: two targets in the same
// block are the same destination.
func (t Target) block() [3]int64 {
	y := int64(math.MaxInt64)
	if t.HasY {
		y = int64(math.Round(t.Y))
	}
	return [3]int64{int64(math.Round(t.X)), y, int64(math.Round(t.Z))}
}

// distance is the distance from the target to a recorded position:
// horizontal for a target without y, 3-D otherwise.
func (t Target) distance(x, y, z float64) float64 {
	dx, dz := t.X-x, t.Z-z
	if !t.HasY {
		return math.Hypot(dx, dz)
	}
	dy := t.Y - y
	return math.Sqrt(dx*dx + dy*dy + dz*dz)
}

// PlanTargets lists the go_to and look_at coordinates a plan names (in
// either plan form play accepts).
func PlanTargets(plan string) ([]Target, error) {
	entries, err := play.ParsePlan(plan)
	if err != nil {
		return nil, err
	}
	var out []Target
	for _, e := range entries {
		if e.Name != "go_to" && e.Name != "look_at" {
			continue
		}
		t := Target{Atom: e.Name}
		var hasX, hasZ bool
		for _, a := range e.Args {
			v, ok := argNumber(a.Value)
			if !ok {
				continue
			}
			switch a.Name {
			case "x":
				t.X, hasX = v, true
			case "y":
				t.Y, t.HasY = v, true
			case "z":
				t.Z, hasZ = v, true
			}
		}
		if hasX && hasZ {
			out = append(out, t)
		}
	}
	return out, nil
}

func argNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case string:
		f, err := strconv.ParseFloat(x, 64)
		return f, err == nil
	}
	return 0, false
}

// RetargetTurn is one turn of the analysis.
type RetargetTurn struct {
	ID         string   `json:"id"`
	StepBefore int64    `json:"step_before"`
	Targets    []Target `json:"targets,omitempty"`
	// New are the targets the running plan (the previous turn's) did not
	// name; Retarget is whether there are any.
	New      []Target `json:"new,omitempty"`
	Retarget bool     `json:"retarget"`
	// OpenedFrame: a stored episode's frame was opened before the plan;
	// OpenedImage: any image was (a stored frame, now/, a view image).
	OpenedFrame bool     `json:"opened_frame"`
	OpenedImage bool     `json:"opened_image"`
	LookedAt    []string `json:"looked_at,omitempty"` // the episodes whose frames were opened
	// Recall: a new target within RecallRadius of where a looked-at
	// episode was recorded; Null: the share of the episodes stored when
	// the turn began that lie within RecallRadius of a new target.
	Recall bool    `json:"recall,omitempty"`
	Null   float64 `json:"null,omitempty"`
	// Reach: for each stored episode read before the plan, how many steps
	// before the turn what it read was recorded.
	Reach     []int64 `json:"reach,omitempty"`
	PlanError string  `json:"plan_error,omitempty"`
}

// RateGroup is a group of turns and how many of them retarget.
type RateGroup struct {
	Turns     int     `json:"turns"`
	Retargets int     `json:"retargets"`
	Rate      float64 `json:"rate"`
}

// ReachSummary summarises how far back the reads of stored episodes went.
type ReachSummary struct {
	Reads  int     `json:"reads"`
	Median float64 `json:"median"`
	Mean   float64 `json:"mean"`
	Max    int64   `json:"max"`
}

// RetargetReport is MFM's retrieval → retarget analysis (section A.4,
// Fig. 16) of one play store.
type RetargetReport struct {
	Store string `json:"store"`
	Task  string `json:"task"`
	Turns int    `json:"turns"`
	// ReadsFrom says where the reads came from (the access log's path, or
	// run.json's reads_before).
	ReadsFrom string `json:"reads_from"`
	// Frame: turns that opened a stored frame; NoImage: turns that opened
	// no image at all; OnlyOtherImage: turns that opened an image but no
	// stored frame (in neither group).
	Frame          RateGroup `json:"frame"`
	NoImage        RateGroup `json:"no_image"`
	OnlyOtherImage int       `json:"only_other_image"`
	// FisherTwoSided and FisherGreater test Frame's retarget rate against
	// NoImage's (greater: Frame's is higher).
	FisherTwoSided float64 `json:"fisher_two_sided"`
	FisherGreater  float64 `json:"fisher_greater"`
	// Of the Frame group's retargets, Recalls have a new target near a
	// looked-at episode; NullMean is the mean position-only share, and
	// BinomialP = P(X >= Recalls) for X ~ Binomial(RecallTrials, NullMean).
	RecallTrials int     `json:"recall_trials"`
	Recalls      int     `json:"recalls"`
	NullMean     float64 `json:"null_mean"`
	BinomialP    float64 `json:"binomial_p"`
	// Reach: how many steps back the reads of stored episodes went.
	Reach    ReachSummary   `json:"reach"`
	PerTurn  []RetargetTurn `json:"per_turn"`
	Warnings []string       `json:"warnings,omitempty"`
}

// EpisodePos is where and when an episode was recorded.
type EpisodePos struct {
	ID                  string
	X, Y, Z             float64
	FirstStep, LastStep int64
}

var episodePathRe = regexp.MustCompile(`(?:^|/)episodes/(ep_[0-9]+)(?:/(.*))?$`)

// isImage reports a path to an image file.
func isImage(p string) bool {
	switch strings.ToLower(path.Ext(p)) {
	case ".png", ".jpg", ".jpeg", ".webp":
		return true
	}
	return false
}

// AnalyzeRetarget runs the analysis on a run's turns with each turn's
// memory reads (reads[turn id]) and the store's episodes.
func AnalyzeRetarget(run play.RunRecord, reads map[string][]play.MemoryRead, eps []EpisodePos) RetargetReport {
	rep := RetargetReport{Task: run.Task.Name}
	byID := map[string]EpisodePos{}
	for _, e := range eps {
		byID[e.ID] = e
	}
	var running []Target
	for _, tr := range run.Turns {
		rt := RetargetTurn{ID: tr.ID, StepBefore: tr.StepBefore}
		targets, err := PlanTargets(tr.Plan)
		if err != nil {
			rt.PlanError = err.Error()
		}
		rt.Targets = targets
		seen := map[[3]int64]bool{}
		for _, t := range running {
			seen[t.block()] = true
			seen[flat(t.block())] = true
		}
		for _, t := range targets {
			b := t.block()
			if !seen[b] && !seen[flat(b)] {
				rt.New = append(rt.New, t)
			}
		}
		rt.Retarget = len(rt.New) > 0
		running = targets
		looked := map[string]bool{}
		for _, r := range reads[tr.ID] {
			if isImage(r.Path) {
				rt.OpenedImage = true
			}
			m := episodePathRe.FindStringSubmatch(r.Path)
			if m == nil {
				continue
			}
			ep, known := byID[m[1]]
			if isImage(r.Path) && strings.HasPrefix(m[2], "frames/") || r.Kind == "frame" {
				rt.OpenedFrame = true
				if !looked[m[1]] {
					looked[m[1]] = true
					rt.LookedAt = append(rt.LookedAt, m[1])
				}
			}
			if !known {
				continue
			}
			at := ep.LastStep
			if s, ok := frameStep(m[2]); ok {
				at = s
			}
			if m[2] != "" && !strings.HasSuffix(m[2], "frames") { // a listing reads nothing recorded
				rt.Reach = append(rt.Reach, tr.StepBefore-at)
			}
		}
		if rt.OpenedFrame && rt.Retarget {
			rt.Recall = recalls(rt.New, rt.LookedAt, byID)
			rt.Null = nullShare(rt.New, eps, tr.StepBefore)
		}
		rep.PerTurn = append(rep.PerTurn, rt)
	}
	rep.summarize()
	return rep
}

// summarize computes the groups, tests and reach from the per-turn rows.
func (rep *RetargetReport) summarize() {
	var nulls, reach []float64
	rep.Turns, rep.Frame, rep.NoImage, rep.OnlyOtherImage = len(rep.PerTurn), RateGroup{}, RateGroup{}, 0
	rep.RecallTrials, rep.Recalls, rep.NullMean, rep.BinomialP, rep.Reach = 0, 0, 0, 1, ReachSummary{}
	for _, rt := range rep.PerTurn {
		for _, r := range rt.Reach {
			reach = append(reach, float64(r))
		}
		switch {
		case rt.OpenedFrame:
			rep.Frame.Turns++
			if rt.Retarget {
				rep.Frame.Retargets++
				rep.RecallTrials++
				if rt.Recall {
					rep.Recalls++
				}
				nulls = append(nulls, rt.Null)
			}
		case rt.OpenedImage:
			rep.OnlyOtherImage++
		default:
			rep.NoImage.Turns++
			if rt.Retarget {
				rep.NoImage.Retargets++
			}
		}
	}
	rep.Frame.Rate = ratio(float64(rep.Frame.Retargets), float64(rep.Frame.Turns))
	rep.NoImage.Rate = ratio(float64(rep.NoImage.Retargets), float64(rep.NoImage.Turns))
	rep.FisherTwoSided, rep.FisherGreater, _ = FisherExact(rep.Frame.Retargets, rep.Frame.Turns-rep.Frame.Retargets,
		rep.NoImage.Retargets, rep.NoImage.Turns-rep.NoImage.Retargets)
	if len(nulls) > 0 {
		rep.NullMean = stat.Mean(nulls, nil)
		rep.BinomialP, _ = BinomialTail(rep.Recalls, rep.RecallTrials, rep.NullMean)
	}
	if len(reach) > 0 {
		sort.Float64s(reach)
		rep.Reach = ReachSummary{Reads: len(reach), Median: median(reach),
			Mean: stat.Mean(reach, nil), Max: int64(reach[len(reach)-1])}
	}
}

// PoolRetarget pools several runs' analyses (the paper pools its runs):
// the turns of all, their groups, tests and reach. Turn ids are prefixed
// with their report's store.
func PoolRetarget(reps []RetargetReport) RetargetReport {
	pool := RetargetReport{Store: "pooled", ReadsFrom: "each store's own"}
	var tasks []string
	for _, r := range reps {
		tasks = append(tasks, r.Task)
		for _, t := range r.PerTurn {
			t.ID = r.Store + ":" + t.ID
			pool.PerTurn = append(pool.PerTurn, t)
		}
		for _, w := range r.Warnings {
			pool.Warnings = append(pool.Warnings, r.Store+": "+w)
		}
	}
	pool.Task = strings.Join(tasks, "+")
	pool.summarize()
	return pool
}

// flat drops the y of a block so a horizontal target matches any height.
func flat(b [3]int64) [3]int64 { return [3]int64{b[0], math.MaxInt64, b[2]} }

// frameStep reads the step a frame file is named by (frames/000300.png).
func frameStep(rel string) (int64, bool) {
	if !strings.HasPrefix(rel, "frames/") {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSuffix(path.Base(rel), path.Ext(rel)), 10, 64)
	return n, err == nil
}

// recalls reports a new target within RecallRadius of a looked-at
// episode's recorded position.
func recalls(targets []Target, looked []string, byID map[string]EpisodePos) bool {
	for _, id := range looked {
		ep, ok := byID[id]
		if !ok {
			continue
		}
		for _, t := range targets {
			if t.distance(ep.X, ep.Y, ep.Z) <= RecallRadius {
				return true
			}
		}
	}
	return false
}

// nullShare is the share of the episodes stored before step that lie
// within RecallRadius of a target: how often position alone would match.
func nullShare(targets []Target, eps []EpisodePos, step int64) float64 {
	var stored, match int
	for _, e := range eps {
		if e.LastStep > step {
			continue
		}
		stored++
		for _, t := range targets {
			if t.distance(e.X, e.Y, e.Z) <= RecallRadius {
				match++
				break
			}
		}
	}
	return ratio(float64(match), float64(stored))
}

// Retarget runs the analysis on play store dir. Reads come from
// accessLog (the mount's access log; "" takes the store's
// .mfm/access.jsonl when it exists), attributed to turns as play does
// (a read counts for the first turn that began after it), else from
// run.json's reads_before. A store without run.json turns is refused.
func Retarget(dir, accessLog string) (RetargetReport, error) {
	s, err := episodes.Open(dir)
	if err != nil {
		return RetargetReport{}, fmt.Errorf("retarget: %w", err)
	}
	run, err := play.ReadRun(s)
	if err != nil {
		return RetargetReport{}, fmt.Errorf("retarget: %s has no play run.json: %w", dir, err)
	}
	if len(run.Turns) == 0 {
		return RetargetReport{}, fmt.Errorf("retarget: %s: run.json records no turns", dir)
	}
	lives, err := s.Lives()
	if err != nil {
		return RetargetReport{}, fmt.Errorf("retarget: %w", err)
	}
	var eps []EpisodePos
	for _, l := range lives {
		rows, err := l.AllRows()
		if err != nil {
			return RetargetReport{}, fmt.Errorf("retarget: %w", err)
		}
		for _, r := range rows {
			eps = append(eps, EpisodePos{ID: r.ID, X: r.X, Y: r.Y, Z: r.Z, FirstStep: r.FirstStep, LastStep: r.LastStep})
		}
	}
	if len(eps) == 0 {
		return RetargetReport{}, fmt.Errorf("retarget: %s: no stored episodes", dir)
	}
	var warnings []string
	reads := map[string][]play.MemoryRead{}
	from := "run.json reads_before"
	if accessLog == "" {
		if p := s.Path(episodes.MetaDir, play.AccessLogName); fileExists(p) {
			accessLog = p
		}
	}
	if accessLog != "" {
		rows, skipped, err := readAccessLog(accessLog)
		if err != nil {
			return RetargetReport{}, err
		}
		if skipped > 0 {
			warnings = append(warnings, fmt.Sprintf("%s: %d rows without a time or path left out", accessLog, skipped))
		}
		start, _ := time.Parse(time.RFC3339Nano, run.Started)
		early := 0
		for _, r := range rows {
			at, _ := time.Parse(time.RFC3339Nano, r.Time)
			if !start.IsZero() && at.Before(start) {
				early++
				continue
			}
			if id := play.TurnOf(run, r, at); id != "" {
				reads[id] = append(reads[id], r)
			}
		}
		if early > 0 {
			warnings = append(warnings, fmt.Sprintf("%d reads before the run began left out", early))
		}
		from = accessLog
	} else {
		n := 0
		for _, t := range run.Turns {
			reads[t.ID] = t.ReadsBefore
			n += len(t.ReadsBefore)
		}
		if n == 0 {
			warnings = append(warnings, "no access log and no reads_before in run.json: every turn counts as one that opened nothing")
		}
	}
	rep := AnalyzeRetarget(run, reads, eps)
	rep.Store, rep.ReadsFrom, rep.Warnings = dir, from, append(warnings, rep.Warnings...)
	for _, t := range rep.PerTurn {
		if t.PlanError != "" {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("turn %s: plan not parsed: %s", t.ID, t.PlanError))
		}
	}
	return rep, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// readAccessLog reads the mount's access log rows.
func readAccessLog(p string) ([]play.MemoryRead, int, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, 0, fmt.Errorf("retarget: read access log: %w", err)
	}
	rows, skipped, err := ParseAccessLog(b)
	if err != nil {
		return nil, skipped, fmt.Errorf("retarget: %s: %w", p, err)
	}
	return rows, skipped, nil
}

// ParseAccessLog decodes the mount's access log (one JSON row a line with
// time, path, kind); rows without a path or an RFC 3339 time are counted
// in skipped. A log with rows but none readable is an error.
func ParseAccessLog(b []byte) (rows []play.MemoryRead, skipped int, err error) {
	for _, line := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var r play.MemoryRead
		if json.Unmarshal([]byte(line), &r) != nil || r.Path == "" || r.Time == "" {
			skipped++
			continue
		}
		if _, err := time.Parse(time.RFC3339Nano, r.Time); err != nil {
			skipped++
			continue
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 && skipped > 0 {
		return nil, skipped, errors.New("no readable rows")
	}
	return rows, skipped, nil
}

// median of sorted values: the middle one, or the mean of the middle two.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}
