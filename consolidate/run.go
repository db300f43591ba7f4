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
	"syscall"
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
	Notes    []string // warnings to show (e.g. from the language-model step)
	// K is the persistent knowledge store after this pass: read from
	// mine/knowledge/, evolved by the accepted and rejected candidates
	// (Evolve) unless Config.StaticK freezes it. KChanges says what changed.
	K        *K
	KChanges []string
}

// Knowledge returns what a retrieval chooses from: K's active entries.
func (r *Result) Knowledge() []Candidate {
	if r.K == nil {
		return r.Accepted
	}
	return r.K.Active()
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

// KnownEpisodes are the episodes fb covers, by EpisodeKey.
func KnownEpisodes(fb []Feedback) map[string]bool {
	k := map[string]bool{}
	for _, f := range fb {
		k[EpisodeKey(f.Life, f.Episode)] = true
	}
	return k
}

// Compute runs Monitor, Inducer and Curator over s without writing
// anything. extra are candidates from elsewhere (a language model).
// Accepted entries carry their usage history (usage.jsonl).
//
// K is read from mine/knowledge/ and evolved in the result (Result.K),
// not written: WriteK stores it.
func Compute(s *episodes.Store, cfg Config, extra []Candidate) (*Result, error) {
	res, err := compute(s, cfg, extra)
	if err != nil {
		return nil, err
	}
	return withUsage(s, res)
}

// compute is Compute without the usage history.
func compute(s *episodes.Store, cfg Config, extra []Candidate) (*Result, error) {
	res, err := curated(s, cfg, extra)
	if err != nil {
		return nil, err
	}
	if err := res.evolve(s, cfg, time.Now()); err != nil {
		return nil, err
	}
	return res, nil
}

// curated runs Monitor, Inducer and Curator, the Curator checking
// against the recorded states and the persistent K as read; Result.K is
// that K, not yet evolved.
func curated(s *episodes.Store, cfg Config, extra []Candidate) (*Result, error) {
	fb, err := Monitor(s, cfg)
	if err != nil {
		return nil, err
	}
	k, err := ReadK(s)
	if err != nil {
		return nil, err
	}
	extra = append([]Candidate(nil), extra...)
	Annotate(extra, fb, cfg)
	cands := append(Induce(fb, cfg), extra...)
	acc, rej := CurateWith(cands, Knowledge{Steps: Known(s, fb), Episodes: KnownEpisodes(fb), States: EpisodeStates(fb), K: k.Active()})
	m, _ := ReadMarker(s)
	return &Result{Feedback: fb, Accepted: acc, Rejected: rej, Digest: Digest(fb, m), K: k}, nil
}

// evolve replaces r.K by its evolution with r's candidates (Evolve),
// unless cfg.StaticK.
func (r *Result) evolve(s *episodes.Store, cfg Config, now time.Time) error {
	if cfg.StaticK {
		return nil
	}
	recs, err := ReadUsage(s)
	if err != nil {
		return err
	}
	retrieved, used := usageCounts(recs)
	r.K, r.KChanges = Evolve(r.K, r.Accepted, r.Rejected, KnownEpisodes(r.Feedback), retrieved, now)
	// an entry's episodes are cited where they are now (after mfmd life
	// new, in previous/)
	prev := map[string]bool{}
	for _, f := range r.Feedback {
		prev[EpisodeKey(f.Life, f.Episode)] = f.Previous
	}
	for _, e := range r.K.Entries {
		e.Used = used[e.ID]
		for i, ref := range e.Support {
			if p, ok := prev[EpisodeKey(ref.Life, ref.ID)]; ok {
				e.Support[i].Previous = p
			}
		}
	}
	return nil
}

// usageCounts counts, by entry id, the retrievals of recs and the uses
// (ViaUsed) apart.
func usageCounts(recs []UsageRecord) (retrieved, used map[string]int) {
	retrieved, used = map[string]int{}, map[string]int{}
	for _, u := range recs {
		for _, id := range u.IDs {
			if u.Via == ViaUsed {
				used[id]++
			} else {
				retrieved[id]++
			}
		}
	}
	return retrieved, used
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

// Prompts sent to --llm-cmd (quoted in docs/CONSOLIDATE.md; a test keeps
// the two the same). The command gets on stdin the prompt, then a line
// "KNOWN CALLS: a, b, …" (induce only), a blank line and the data.
const (
	PromptInduce = `You are the Inducer of an embodied agent's memory. Below is typed feedback, one JSON object per episode
(call, success, verified, moved, inventory_delta, milestones, changed, failure, progress, stagnant).
Propose skills (from runs of verified successes) and remedies (for repeated failures or stagnation).
Answer with JSON only: {"candidates": [CANDIDATE, ...]} where CANDIDATE has the fields
kind ("skill"|"remedy"), name, trigger (object over subgoal, call, failure, item, gui_open; string values),
preconditions, steps (skill: calls), verify ("inv_ge ITEM N" | "milestone NAME"),
effects, failure_type, risk, repair (remedy: calls), scope, support ([{"life": N, "id": "ep_NNNNNN"}]), confidence (0..1].
Steps and repairs must name the known calls listed below; support must name episodes of the feedback;
vague steps ("try again", "be careful") are rejected.
`
	PromptCurate = `You are the Curator of an embodied agent's memory. Below are candidates the rule-based curator accepted,
as a JSON array. Reject any that is wrong, redundant or unsafe, saying why. Answer with JSON only:
{"reject": [{"id": "ID", "reason": "why"}]} ({"reject": []} to keep them all). You cannot accept new entries here.
`
)

// LLM is the optional language-model step of a consolidation.
type LLM struct {
	Cmd     string        // run as sh -c Cmd, the prompt on stdin, the JSON answer on stdout
	Timeout time.Duration // per prompt; 0: DefaultLLMTimeout
}

// DefaultLLMTimeout bounds one --llm-cmd call.
const DefaultLLMTimeout = 2 * time.Minute

// MaxLLMAnswer bounds an answer's size.
const MaxLLMAnswer = 8 << 20

// llmInduce and llmCurate are the answers to the two prompts.
type llmInduce struct {
	Candidates *[]Candidate `json:"candidates"`
}

type llmCurate struct {
	Reject *[]struct {
		ID     string `json:"id"`
		Reason string `json:"reason"`
	} `json:"reject"`
}

// limitWriter keeps at most n bytes and remembers that more came.
type limitWriter struct {
	b    bytes.Buffer
	n    int
	over bool
}

func (w *limitWriter) Write(p []byte) (int, error) {
	if room := w.n - w.b.Len(); len(p) > room {
		w.b.Write(p[:max(room, 0)])
		w.over = true
		return len(p), nil
	}
	return w.b.Write(p)
}

// Run sends prompt on stdin to sh -c l.Cmd and returns its answer, the
// JSON object it printed (optionally inside a markdown code fence). The
// command runs in its own process group, killed with it on timeout.
func (l LLM) Run(ctx context.Context, prompt string) ([]byte, error) {
	timeout := l.Timeout
	if timeout <= 0 {
		timeout = DefaultLLMTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c := exec.CommandContext(ctx, "sh", "-c", l.Cmd)
	c.Stdin = strings.NewReader(prompt)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	c.WaitDelay = 2 * time.Second
	out := &limitWriter{n: MaxLLMAnswer}
	stderr := &limitWriter{n: 4096}
	c.Stdout, c.Stderr = out, stderr
	err := c.Run()
	if ctx.Err() == context.DeadlineExceeded {
		return nil, fmt.Errorf("llm command %q timed out after %v", l.Cmd, timeout)
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.b.String())
		if msg != "" {
			msg = ": " + msg
		}
		return nil, fmt.Errorf("llm command %q failed: %v%s", l.Cmd, err, msg)
	}
	if out.over {
		return nil, fmt.Errorf("llm command %q: answer longer than %d bytes", l.Cmd, MaxLLMAnswer)
	}
	ans := bytes.TrimSpace(out.b.Bytes())
	if rest, ok := bytes.CutPrefix(ans, []byte("```")); ok {
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			rest = rest[i+1:] // drop the fence's language tag
		}
		ans = bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte("```")))
	}
	if len(ans) == 0 || ans[0] != '{' || !json.Valid(ans) {
		show := ans
		if len(show) > 200 {
			show = append(show[:200:200], "…"...)
		}
		return nil, fmt.Errorf("llm command %q: the answer is not a JSON object: %q", l.Cmd, show)
	}
	return ans, nil
}

// InducePrompt is what the induce step sends: PromptInduce, the known calls, the feedback.
func InducePrompt(fb []Feedback, known map[string]bool) string {
	calls := make([]string, 0, len(known))
	for k := range known {
		calls = append(calls, k)
	}
	sort.Strings(calls)
	return PromptInduce + "KNOWN CALLS: " + strings.Join(calls, ", ") + "\n\n" + string(FeedbackJSONL(fb))
}

// CuratePrompt is what the curate step sends: PromptCurate and the accepted entries.
func CuratePrompt(accepted []Candidate) string {
	j, _ := json.Marshal(accepted)
	return PromptCurate + "\n" + string(j) + "\n"
}

// ComputeLLM is Compute with a language-model step: the candidates the
// induce prompt returns join the inducer's and are validated by the same
// Curator (source "llm"; an id, status, usage or support count the model
// sent is dropped), then the curate prompt may reject accepted entries,
// its reason kept as "llm curator: …". A failing or timed-out command, or
// an answer that is not the JSON asked for, is an error naming the step.
func ComputeLLM(ctx context.Context, s *episodes.Store, cfg Config, l LLM) (*Result, error) {
	fb, err := Monitor(s, cfg)
	if err != nil {
		return nil, err
	}
	ans, err := l.Run(ctx, InducePrompt(fb, Known(s, fb)))
	if err != nil {
		return nil, fmt.Errorf("induce: %w", err)
	}
	var ind llmInduce
	if err := json.Unmarshal(ans, &ind); err != nil || ind.Candidates == nil {
		if err == nil {
			err = errors.New(`no "candidates" array`)
		}
		return nil, fmt.Errorf("induce: llm command %q: want {\"candidates\": [...]}: %v", l.Cmd, err)
	}
	extra := *ind.Candidates
	for i := range extra {
		c := &extra[i]
		c.Source, c.ID, c.Status, c.Reason, c.Usage, c.Retrieved, c.SupportCount = "llm", "", "", "", nil, 0, 0
		for j := range c.Support {
			c.Support[j].ID = normID(c.Support[j].ID)
		}
	}
	res, err := curated(s, cfg, extra)
	if err != nil {
		return nil, err
	}
	ans, err = l.Run(ctx, CuratePrompt(res.Accepted))
	if err != nil {
		return nil, fmt.Errorf("curate: %w", err)
	}
	var cur llmCurate
	if err := json.Unmarshal(ans, &cur); err != nil || cur.Reject == nil {
		if err == nil {
			err = errors.New(`no "reject" array`)
		}
		return nil, fmt.Errorf("curate: llm command %q: want {\"reject\": [...]}: %v", l.Cmd, err)
	}
	why := map[string]string{}
	for _, r := range *cur.Reject {
		reason := strings.TrimSpace(r.Reason)
		if reason == "" {
			reason = "(no reason given)"
		}
		why[r.ID] = reason
	}
	var keep []Candidate
	for _, c := range res.Accepted {
		if r, ok := why[c.ID]; ok {
			c.Status, c.Reason = StatusRejected, "llm curator: "+r
			res.Rejected = append(res.Rejected, c)
			delete(why, c.ID)
			continue
		}
		keep = append(keep, c)
	}
	res.Accepted = keep
	uniqueIDs(res.Accepted, res.Rejected)
	for _, id := range sortedTrig(why) {
		res.Notes = append(res.Notes, fmt.Sprintf("llm curator rejected %q, which is not an accepted entry: ignored", id))
	}
	if err := res.evolve(s, cfg, time.Now()); err != nil {
		return nil, err
	}
	return withUsage(s, res)
}
