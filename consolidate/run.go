package consolidate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/harness"
)

// Dir is the derived-data directory, relative to the store root.
const Dir = ".mfm/consolidate"

// Mark is the first line of every file --apply writes into mine/.
const Mark = "<!-- mfm-consolidate: generated from recorded episodes; edit freely -->"

// Result is one consolidation pass.
type Result struct {
	Feedback []Feedback
	Accepted []Candidate
	Rejected []Candidate
	Digest   []byte
}

// Marker records where the last consolidation ended (.mfm/consolidate/state.json).
type Marker struct {
	Life     int    `json:"life"`
	LastStep int64  `json:"last_step"`
	Time     string `json:"time"`
}

// Known returns the atoms and procedures a step may name: every
// action_kind recorded in s and every procedure in mine/procedures.
func Known(s *episodes.Store, fb []Feedback) map[string]bool {
	k := map[string]bool{}
	for _, f := range fb {
		if f.Call != "" {
			k[f.Call] = true
		}
	}
	procs, _, _ := harness.ListProcedures(s.Path(episodes.MineDir, "procedures"), harness.KindProcedure)
	for _, p := range procs {
		k[p.Name] = true
	}
	return k
}

// Compute runs Monitor, Inducer and Curator over s without writing
// anything. extra are candidates from elsewhere (a language model).
// Accepted entries carry their usage history (usage.jsonl).
func Compute(s *episodes.Store, cfg Config, extra []Candidate) (*Result, error) {
	res, err := compute(s, cfg, extra)
	if err != nil {
		return nil, err
	}
	return withUsage(s, res)
}

// compute is Compute without the usage history.
func compute(s *episodes.Store, cfg Config, extra []Candidate) (*Result, error) {
	fb, err := Monitor(s, cfg)
	if err != nil {
		return nil, err
	}
	cands := append(Induce(fb, cfg), extra...)
	acc, rej := Curate(cands, Known(s, fb))
	m, _ := ReadMarker(s)
	return &Result{Feedback: fb, Accepted: acc, Rejected: rej, Digest: Digest(fb, m)}, nil
}

// withUsage returns a copy of res whose accepted entries carry the usage history.
func withUsage(s *episodes.Store, res *Result) (*Result, error) {
	recs, err := ReadUsage(s)
	if err != nil {
		return nil, err
	}
	r := *res
	r.Accepted = WithUsage(res.Accepted, recs)
	return &r, nil
}

// ReadMarker reads the last consolidation's marker (zero if none).
func ReadMarker(s *episodes.Store) (Marker, error) {
	var m Marker
	b, err := os.ReadFile(s.Path(Dir, "state.json"))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return m, nil
		}
		return m, err
	}
	return m, json.Unmarshal(b, &m)
}

// Digest summarises the feedback after marker m: milestones, failures,
// stagnation and places, each line citing episodes.
func Digest(fb []Feedback, m Marker) []byte {
	var b strings.Builder
	var recent []Feedback
	for _, f := range fb {
		if f.Life > m.Life || f.Life == m.Life && f.LastStep > m.LastStep {
			recent = append(recent, f)
		}
	}
	if m.Life == 0 {
		fmt.Fprintf(&b, "# Digest: all %d episodes (no earlier consolidation)\n", len(recent))
	} else {
		fmt.Fprintf(&b, "# Digest: %d episodes since life %d step %d (consolidated %s)\n", len(recent), m.Life, m.LastStep, m.Time)
	}
	b.WriteString("\n## Milestones\n")
	for _, f := range recent {
		for _, ms := range f.Milestones {
			fmt.Fprintf(&b, "- %s at step %d near (%.0f, %.0f, %.0f) — %s\n", ms, f.LastStep, f.Pos[0], f.Pos[1], f.Pos[2], RefString(f.ref()))
		}
	}
	b.WriteString("\n## Failures\n")
	byType := map[string][]Feedback{}
	for _, f := range recent {
		if f.Failure != "" {
			byType[f.Failure] = append(byType[f.Failure], f)
		}
	}
	types := make([]string, 0, len(byType))
	for t := range byType {
		types = append(types, t)
	}
	sort.Strings(types)
	for _, t := range types {
		calls := map[string]int{}
		for _, f := range byType[t] {
			calls[f.Call]++
		}
		var cs []string
		for _, c := range sortedKeys(calls) {
			cs = append(cs, fmt.Sprintf("%s ×%d", c, calls[c]))
		}
		fmt.Fprintf(&b, "- %s ×%d (%s): %s\n", t, len(byType[t]), strings.Join(cs, ", "), cite(byType[t]))
	}
	b.WriteString("\n## Stagnation\n")
	var stag []Feedback
	for _, f := range recent {
		if f.Stagnant {
			stag = append(stag, f)
		}
	}
	if len(stag) > 0 {
		fmt.Fprintf(&b, "- %d stagnant episode(s) (progress < εp, no success): %s\n", len(stag), cite(stag))
	}
	b.WriteString("\n## Places\n")
	type cell struct{ x, z int }
	places := map[cell][]Feedback{}
	var order []cell
	for _, f := range recent {
		if f.Failure == "" && len(f.Milestones) == 0 {
			continue
		}
		c := cell{int(math.Floor(f.Pos[0] / 8)), int(math.Floor(f.Pos[2] / 8))}
		if _, ok := places[c]; !ok {
			order = append(order, c)
		}
		places[c] = append(places[c], f)
	}
	for _, c := range order {
		fs := places[c]
		what := map[string]int{}
		for _, f := range fs {
			if f.Failure != "" {
				what[f.Failure]++
			}
			for _, m := range f.Milestones {
				what["milestone "+m]++
			}
		}
		var ws []string
		for _, k := range sortedKeys(what) {
			ws = append(ws, fmt.Sprintf("%s ×%d", k, what[k]))
		}
		fmt.Fprintf(&b, "- around (%.0f, %.0f, %.0f): %s — %s\n", fs[0].Pos[0], fs[0].Pos[1], fs[0].Pos[2], strings.Join(ws, ", "), cite(fs))
	}
	return []byte(b.String())
}

func cite(fs []Feedback) string {
	const maxCite = 8
	var ids []string
	for i, f := range fs {
		if i == maxCite {
			ids = append(ids, fmt.Sprintf("… +%d more (last %s)", len(fs)-maxCite, RefString(fs[len(fs)-1].ref())))
			break
		}
		ids = append(ids, RefString(f.ref()))
	}
	return strings.Join(ids, ", ")
}

// FeedbackJSONL renders feedback one JSON object a line.
func FeedbackJSONL(fb []Feedback) []byte {
	var b bytes.Buffer
	for _, f := range fb {
		j, _ := json.Marshal(f)
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// CandidateJSON is a candidate's indented JSON.
func CandidateJSON(c Candidate) []byte {
	j, _ := json.MarshalIndent(c, "", "  ")
	return append(j, '\n')
}

// Write stores res under .mfm/consolidate/ (replacing the previous
// candidates) and records the marker. It never touches the record or mine/.
func Write(s *episodes.Store, res *Result) error {
	dir := s.Path(Dir)
	cdir := filepath.Join(dir, "candidates")
	if err := os.RemoveAll(cdir); err != nil {
		return fmt.Errorf("consolidate: %w", err)
	}
	if err := os.MkdirAll(cdir, 0o755); err != nil {
		return fmt.Errorf("consolidate: %w", err)
	}
	files := map[string][]byte{
		"feedback.jsonl": FeedbackJSONL(res.Feedback),
		"digest.md":      res.Digest,
	}
	var rej bytes.Buffer
	for _, c := range res.Rejected {
		j, _ := json.Marshal(c)
		rej.Write(j)
		rej.WriteByte('\n')
	}
	files["rejected.jsonl"] = rej.Bytes()
	for _, c := range append(append([]Candidate{}, res.Accepted...), res.Rejected...) {
		files["candidates/"+c.ID+".md"] = []byte(Markdown(c))
		files["candidates/"+c.ID+".json"] = CandidateJSON(c)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), data, 0o644); err != nil {
			return fmt.Errorf("consolidate: %w", err)
		}
	}
	m := Marker{Time: time.Now().UTC().Format(time.RFC3339)}
	if n := len(res.Feedback); n > 0 {
		m.Life, m.LastStep = res.Feedback[n-1].Life, res.Feedback[n-1].LastStep
	}
	j, _ := json.MarshalIndent(m, "", "  ")
	return episodes.WriteFileAtomic(filepath.Join(dir, "state.json"), append(j, '\n'), 0o644)
}

// Apply writes every accepted candidate as a new file
// mine/consolidated/<id>.md (marked with Mark, citing its episodes); an
// existing file is left alone. It returns the files written.
func Apply(s *episodes.Store, res *Result) ([]string, error) {
	dir := s.Path(episodes.MineDir, "consolidated")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("apply: %w", err)
	}
	var done []string
	for _, c := range res.Accepted {
		p := filepath.Join(dir, c.ID+".md")
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return done, fmt.Errorf("apply: %w", err)
		}
		_, err = f.WriteString(Mark + "\n" + Markdown(c))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return done, fmt.Errorf("apply %s: %w", p, err)
		}
		done = append(done, "mine/consolidated/"+c.ID+".md")
	}
	return done, nil
}

// Prompts sent to --llm-cmd (documented in docs/CONSOLIDATE.md).
const (
	PromptInduce = `You are the Inducer of an embodied agent's memory. Below is typed feedback, one JSON object per episode
(call, success, verified, moved, inventory_delta, milestones, failure, progress, stagnant).
Propose skills (from runs of verified successes) and remedies (for repeated failures or stagnation).
Answer with JSON only: {"candidates": [CANDIDATE, ...]} where CANDIDATE has the fields
kind ("skill"|"remedy"), name, trigger (object over subgoal, call, failure, item, gui_open),
preconditions, steps (skill: calls that appear in the feedback), verify ("inv_ge ITEM N" | "milestone NAME"),
effects, failure_type, risk, repair (remedy: calls), scope, support ([{"life": N, "id": "ep_NNNNNN"}]), confidence (0..1].
Steps and repairs must name calls seen in the feedback; vague steps ("try again", "be careful") are rejected.
`
	PromptCurate = `You are the Curator of an embodied agent's memory. Below are candidates the rule-based curator accepted,
as JSON. Reject any that is wrong, redundant or unsafe. Answer with JSON only:
{"reject": [{"id": "ID", "reason": "why"}]}. You cannot accept new entries here.
`
)

// llmAnswer is the JSON an --llm-cmd answers.
type llmAnswer struct {
	Candidates []Candidate `json:"candidates"`
	Reject     []struct {
		ID     string `json:"id"`
		Reason string `json:"reason"`
	} `json:"reject"`
}

// RunLLM sends prompt on stdin to `sh -c cmd` (timeout 2 minutes) and
// decodes its JSON answer.
func RunLLM(ctx context.Context, cmd, prompt string) (*llmAnswer, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, "sh", "-c", cmd)
	c.Stdin = strings.NewReader(prompt)
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		return nil, fmt.Errorf("llm command %q: %w: %s", cmd, err, strings.TrimSpace(stderr.String()))
	}
	var a llmAnswer
	if err := json.Unmarshal(bytes.TrimSpace(out), &a); err != nil {
		return nil, fmt.Errorf("llm command %q: answer is not the JSON asked for: %w", cmd, err)
	}
	return &a, nil
}

// ComputeLLM is Compute with a language-model step: the induce prompt's
// candidates join the inducer's (all validated by Curate), then the
// curate prompt may reject accepted entries (with its reason).
func ComputeLLM(ctx context.Context, s *episodes.Store, cfg Config, cmd string) (*Result, error) {
	fb, err := Monitor(s, cfg)
	if err != nil {
		return nil, err
	}
	a, err := RunLLM(ctx, cmd, PromptInduce+"\n"+string(FeedbackJSONL(fb)))
	if err != nil {
		return nil, fmt.Errorf("induce: %w", err)
	}
	for i := range a.Candidates {
		a.Candidates[i].Source = "llm"
		a.Candidates[i].ID = ""
		a.Candidates[i].Status, a.Candidates[i].Reason = "", ""
	}
	res, err := Compute(s, cfg, a.Candidates)
	if err != nil {
		return nil, err
	}
	j, _ := json.Marshal(res.Accepted)
	a2, err := RunLLM(ctx, cmd, PromptCurate+"\n"+string(j)+"\n")
	if err != nil {
		return nil, fmt.Errorf("curate: %w", err)
	}
	why := map[string]string{}
	for _, r := range a2.Reject {
		why[r.ID] = r.Reason
	}
	var keep []Candidate
	for _, c := range res.Accepted {
		if r, ok := why[c.ID]; ok {
			c.Status, c.Reason = StatusRejected, "llm curator: "+r
			res.Rejected = append(res.Rejected, c)
			continue
		}
		keep = append(keep, c)
	}
	res.Accepted = keep
	return res, nil
}
