package play

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mfm-project/mfm/harness"
)

// Adaptor is the memory inside the loop (MineEvolve's Curator and
// Adaptor): the session has it consolidate the record into the
// knowledge store every few turns and at the end of the run, offer the
// knowledge that matches a failed call in the turn block, and learn
// which offered entries the next plan used. Package consolidate
// implements it (wired in cmd/mfmd).
type Adaptor interface {
	// Consolidate runs one consolidation pass over the store and says
	// what it changed.
	Consolidate(ctx context.Context) (ConsolidationRecord, error)
	// Offer retrieves, under a budget, the entries that match a failed
	// call and the current state, and may propose a repaired plan suffix.
	Offer(ctx context.Context, req AdaptRequest) (*MemoryOffer, error)
	// Used records which entries of an offer the next plan used (calls:
	// its entries' atom and procedure names, in order); it returns their ids.
	Used(offer *MemoryOffer, offeredIn, usedIn string, calls []string) ([]string, error)
}

// AdaptRequest is what the Adaptor is told of a turn whose call failed.
type AdaptRequest struct {
	Turn     string
	Episodes []string // the turn's episodes, in order
	Failed   string   // the failed call's last episode
	Goal     string   // the task's instruction
	Subgoal  string   // the next pending milestone
	State    string   // the state after the turn, as [STATE] shows it
	Plan     []PlanStatus
	Known    []string // atoms and procedures a plan may name
}

// PlanStatus is a plan entry and what became of it: done, failed, dropped.
type PlanStatus struct {
	Entry  string `json:"entry"`
	Status string `json:"status"`
}

// MemoryOffer is what a turn block offered from memory after a failed
// call, and what the next plan did with it (run.json's turn "memory").
type MemoryOffer struct {
	Context   string         `json:"context"` // the retrieval context c_i
	Budget    int            `json:"budget"`  // B, tokens
	Tokens    int            `json:"tokens"`  // the tokens of the entries offered
	Entries   []OfferedEntry `json:"entries"`
	Temporary string         `json:"temporary_remedy,omitempty"`
	Feedback  string         `json:"feedback,omitempty"` // the failed call's typed feedback
	// Suffix is the repaired plan suffix proposed (eq. 8), checked like
	// any plan: SuffixSteps its worst-case steps, or SuffixRefused why it
	// would be refused; LLMError why none was proposed.
	Suffix        string   `json:"suffix,omitempty"`
	SuffixSources []string `json:"suffix_sources,omitempty"`
	SuffixSteps   int      `json:"suffix_steps,omitempty"`
	SuffixRefused string   `json:"suffix_refused,omitempty"`
	LLMError      string   `json:"llm_error,omitempty"`
	// UsedBy is the turn whose plan came next; Used the offered entries
	// it used; SuffixUsed whether it began with the proposed suffix.
	UsedBy     string   `json:"used_by,omitempty"`
	Used       []string `json:"used,omitempty"`
	SuffixUsed bool     `json:"suffix_used,omitempty"`
}

// OfferedEntry is one entry of the knowledge store offered.
type OfferedEntry struct {
	ID        string   `json:"id"`
	Kind      string   `json:"kind"` // skill or remedy
	Name      string   `json:"name"`
	Calls     []string `json:"calls"`               // a skill's steps, a remedy's repair
	Procedure string   `json:"procedure,omitempty"` // the skill's runnable procedure
	Relevance float64  `json:"relevance"`
	Tokens    int      `json:"tokens"`
	Line      string   `json:"line"` // as the block shows it
}

// ConsolidationRecord is one consolidation pass during the run
// (run.json "consolidations").
type ConsolidationRecord struct {
	After      string   `json:"after_turn"`
	Reason     string   `json:"reason"` // "every N turns" or "end of the run (REASON)"
	Time       string   `json:"time"`
	Millis     int64    `json:"ms"`
	Episodes   int      `json:"episodes"`
	Accepted   int      `json:"accepted"`
	Rejected   int      `json:"rejected"`
	KActive    int      `json:"k_active"`
	KChanges   []string `json:"k_changes,omitempty"`
	Procedures []string `json:"procedures,omitempty"`
	StaticK    bool     `json:"static_k,omitempty"`
	Error      string   `json:"error,omitempty"`
}

// noteUse checks the plan about to run against the latest offer: which
// offered entries it uses, and whether it begins with the proposed suffix.
func (s *Session) noteUse(entries []Entry) {
	if s.opt.Adaptor == nil || len(s.run.Turns) == 0 {
		return
	}
	prev := &s.run.Turns[len(s.run.Turns)-1]
	m := prev.Memory
	if m == nil || m.UsedBy != "" {
		return
	}
	m.UsedBy = fmt.Sprintf("t%04d", len(s.run.Turns)+1)
	var calls, strs []string
	for _, e := range entries {
		strs = append(strs, e.String())
		if !e.IsRaw() {
			calls = append(calls, e.Name)
		}
	}
	used, err := s.opt.Adaptor.Used(m, prev.ID, m.UsedBy, calls)
	if err != nil {
		s.opt.Logger.Warn("play: record the use of the memory offered", "turn", prev.ID, "err", err)
	}
	m.Used = used
	if m.Suffix != "" && m.SuffixRefused == "" {
		if sfx, err := ParsePlan(m.Suffix); err == nil && len(sfx) <= len(strs) {
			m.SuffixUsed = true
			for i, e := range sfx {
				m.SuffixUsed = m.SuffixUsed && e.String() == strs[i]
			}
		}
	}
}

// adaptTurn is the memory's part of a turn (already in s.run.Turns): a
// consolidation when one is due (every ConsolidateEvery turns, and when
// the run is ending), over run.json brought up to date with the turn,
// then, when a call failed and the run goes on, the Adaptor's offer.
func (s *Session) adaptTurn(ctx context.Context, turn *TurnRecord, b *blockBuilder, after harness.State, ending bool) {
	if s.opt.Adaptor == nil {
		return
	}
	n, every := len(s.run.Turns), s.opt.ConsolidateEvery
	if every > 0 && (ending || n%every == 0) {
		// the Monitor reads the milestones of run.json
		if err := s.writeRun(); err != nil {
			s.opt.Logger.Warn("play: run.json before consolidating", "err", err)
		}
	}
	switch {
	case every > 0 && ending:
		s.consolidate(ctx, turn.ID, "end of the run", b)
	case every > 0 && n%every == 0:
		s.consolidate(ctx, turn.ID, fmt.Sprintf("every %d turns", s.opt.ConsolidateEvery), b)
	}
	if ending {
		return
	}
	req := AdaptRequest{Turn: turn.ID, Goal: s.opt.Task.Instruction, State: stateLine(after)}
	for _, e := range turn.Entries {
		status := e.Outcome
		switch e.Outcome {
		case "ok":
			status = "done"
		case "failed", "error", "refused":
			if req.Failed == "" && len(e.Episodes) > 0 {
				req.Failed = e.Episodes[len(e.Episodes)-1]
			}
			status = "failed"
		}
		req.Plan = append(req.Plan, PlanStatus{Entry: e.Entry, Status: status})
		req.Episodes = append(req.Episodes, e.Episodes...)
	}
	if req.Failed == "" {
		return
	}
	if pend := s.tracker.Pending(); len(pend) > 0 {
		req.Subgoal = pend[0].Name
	}
	req.Known = sortedAtomNames(s.opt.World.Atoms())
	if procs, _, err := harness.ListProcedures(s.opt.Procedures.Dir, harness.KindProcedure); err == nil {
		for _, p := range procs {
			if !p.IsDisabled() {
				req.Known = append(req.Known, p.Name)
			}
		}
	}
	m, err := s.opt.Adaptor.Offer(ctx, req)
	if err != nil {
		s.opt.Logger.Warn("play: the memory offer", "turn", turn.ID, "err", err)
		b.memory = append(b.memory, "[MEMORY] no offer: "+err.Error())
		return
	}
	if m.Suffix != "" {
		if entries, err := ParsePlan(m.Suffix); err != nil {
			m.SuffixRefused = err.Error()
		} else if _, total, err := s.resolve(ctx, entries, after); err != nil {
			m.SuffixRefused = err.Error()
		} else {
			m.SuffixSteps = total
		}
	}
	turn.Memory = m
	b.memory = append(b.memory, memoryLines(m)...)
}

// consolidate runs a pass and records it in run.json (and the block).
func (s *Session) consolidate(ctx context.Context, after, reason string, b *blockBuilder) {
	t0 := s.opt.Clock()
	rec, err := s.opt.Adaptor.Consolidate(ctx)
	rec.After, rec.Reason = after, reason
	rec.Time = t0.UTC().Format(time.RFC3339)
	rec.Millis = s.opt.Clock().Sub(t0).Milliseconds()
	if err != nil {
		rec.Error = err.Error()
		s.opt.Logger.Warn("play: consolidation", "err", err)
	}
	s.run.Consolidations = append(s.run.Consolidations, rec)
	if b == nil {
		return
	}
	if err != nil {
		b.memory = append(b.memory, fmt.Sprintf("[MEMORY] consolidation (%s) failed: %v", reason, err))
		return
	}
	line := fmt.Sprintf("[MEMORY] consolidated (%s): %d episodes, %d accepted, knowledge store %d active, %d change(s)", reason, rec.Episodes, rec.Accepted, rec.KActive, len(rec.KChanges))
	if len(rec.Procedures) > 0 {
		line += "; procedures " + strings.Join(rec.Procedures, ", ")
	}
	b.memory = append(b.memory, line)
}

// memoryLines is the block's [MEMORY] section for an offer.
func memoryLines(m *MemoryOffer) []string {
	out := []string{fmt.Sprintf("[MEMORY] for this failure (%s; %d of %d tokens):", m.Context, m.Tokens, m.Budget)}
	if len(m.Entries) == 0 {
		out = []string{fmt.Sprintf("[MEMORY] nothing in the knowledge store matches this failure (%s)", m.Context)}
	}
	for _, e := range m.Entries {
		out = append(out, "[MEMORY] "+e.Line)
	}
	switch {
	case m.Suffix != "" && m.SuffixRefused == "":
		out = append(out, fmt.Sprintf("[MEMORY] repaired suffix (checked, ≤%d steps, not run): %s", m.SuffixSteps, m.Suffix))
	case m.Suffix != "":
		out = append(out, fmt.Sprintf("[MEMORY] repaired suffix proposed but it would be refused (%s): %s", m.SuffixRefused, m.Suffix))
	case m.LLMError != "":
		out = append(out, "[MEMORY] no repaired suffix: "+m.LLMError)
	}
	return out
}

// consolidateAtStop is the end-of-run pass when the run is stopped from
// outside (after Stop ended it).
func (s *Session) consolidateAtStop() {
	if s.opt.Adaptor == nil || s.opt.ConsolidateEvery <= 0 {
		return
	}
	after := ""
	if n := len(s.run.Turns); n > 0 {
		after = s.run.Turns[n-1].ID
	}
	s.consolidate(context.Background(), after, "end of the run ("+s.run.Termination+")", nil)
}
