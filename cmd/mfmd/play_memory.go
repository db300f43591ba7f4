package main

import (
	"context"

	"github.com/mfm-project/mfm/consolidate"
	"github.com/mfm-project/mfm/play"
)

// loopMemory is the play session's Adaptor: consolidation inside the
// loop and the Adaptor's offers, by package consolidate.
type loopMemory struct{ l *consolidate.Loop }

func (m loopMemory) Consolidate(ctx context.Context) (play.ConsolidationRecord, error) {
	sum, err := m.l.Pass()
	return play.ConsolidationRecord{Episodes: sum.Episodes, Accepted: sum.Accepted, Rejected: sum.Rejected, KActive: sum.Active,
		KChanges: sum.KChanges, Procedures: sum.Procedures, StaticK: sum.StaticK}, err
}

func (m loopMemory) Offer(ctx context.Context, req play.AdaptRequest) (*play.MemoryOffer, error) {
	in := consolidate.OfferInput{Turn: req.Turn, Episodes: req.Episodes, Failed: req.Failed, Goal: req.Goal, Subgoal: req.Subgoal, State: req.State}
	for _, p := range req.Plan {
		in.Plan = append(in.Plan, consolidate.PlanItem{Entry: p.Entry, Status: p.Status})
	}
	o, err := m.l.Offer(ctx, in, req.Known)
	if err != nil {
		return nil, err
	}
	out := &play.MemoryOffer{Context: o.Context, Budget: o.Budget, Tokens: o.Tokens, Entries: []play.OfferedEntry{}, Temporary: o.Temporary,
		Feedback: o.Feedback, SuffixSources: o.Sources, LLMError: o.LLMError}
	for _, e := range o.Entries {
		out.Entries = append(out.Entries, play.OfferedEntry{ID: e.ID, Kind: e.Kind, Name: e.Name, Calls: e.Calls, Procedure: e.Procedure,
			Relevance: e.Relevance, Tokens: e.Tokens, Line: e.Line})
	}
	if len(o.Suffix) > 0 {
		out.Suffix = joinEntries(o.Suffix)
	}
	return out, nil
}

func (m loopMemory) Used(offer *play.MemoryOffer, offeredIn, usedIn string, calls []string) ([]string, error) {
	var ids []string
	for _, e := range offer.Entries {
		if consolidate.UsedBy(consolidate.Offered{ID: e.ID, Calls: e.Calls, Procedure: e.Procedure}, calls) {
			ids = append(ids, e.ID)
		}
	}
	return ids, m.l.RecordUse(offeredIn, usedIn, ids)
}

func joinEntries(es []string) string {
	s := ""
	for i, e := range es {
		if i > 0 {
			s += "; "
		}
		s += e
	}
	return s
}
