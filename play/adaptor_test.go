package play

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// fakeAdaptor records what the session asks of the memory.
type fakeAdaptor struct {
	passes   int
	requests []AdaptRequest
	offer    MemoryOffer
	usedCall [][]string // the calls of each plan checked against an offer
}

func (a *fakeAdaptor) Consolidate(ctx context.Context) (ConsolidationRecord, error) {
	a.passes++
	return ConsolidationRecord{Episodes: 10 * a.passes, Accepted: 1, KActive: a.passes, KChanges: []string{"skill-x: inserted"}}, nil
}

func (a *fakeAdaptor) Offer(ctx context.Context, req AdaptRequest) (*MemoryOffer, error) {
	a.requests = append(a.requests, req)
	o := a.offer
	return &o, nil
}

func (a *fakeAdaptor) Used(o *MemoryOffer, offeredIn, usedIn string, calls []string) ([]string, error) {
	a.usedCall = append(a.usedCall, calls)
	var ids []string
	for _, e := range o.Entries {
		if slices.Contains(calls, e.Procedure) {
			ids = append(ids, e.ID)
		}
	}
	return ids, nil
}

// A failed call gets a [MEMORY] section with what the Adaptor offers and
// the suffix checked like a plan; the next plan is checked against the
// offer; consolidation runs every N turns and at the end, recorded.
func TestAdaptorInTurnBlock(t *testing.T) {
	a := &fakeAdaptor{offer: MemoryOffer{Context: "call=mine_ahead,failure=NO_EFFECT", Budget: 120, Tokens: 30,
		Entries: []OfferedEntry{{ID: "skill-log-abc", Kind: "skill", Name: "log", Calls: []string{"go_to", "mine_ahead"}, Procedure: "skill_log",
			Line: "skill log: go_to → mine_ahead; call skill_log; verify milestone log (0.67, ep_000002) [skill-log-abc]"}},
		Suffix: "go_to x=5 z=0; mine_ahead"}}
	f := newFixture(t, logTask, Options{Adaptor: a, ConsolidateEvery: 2})

	block := f.act(t, "mine_ahead")
	for _, want := range []string{
		"[MEMORY] for this failure (call=mine_ahead,failure=NO_EFFECT; 30 of 120 tokens):",
		"[MEMORY] skill log: go_to → mine_ahead; call skill_log;",
		"[MEMORY] repaired suffix (checked, ≤13 steps, not run): go_to x=5 z=0; mine_ahead",
	} {
		if !strings.Contains(block, want) {
			t.Errorf("block lacks %q:\n%s", want, block)
		}
	}
	if len(a.requests) != 1 || a.requests[0].Failed != "ep_000001" || a.requests[0].Subgoal != "log" ||
		len(a.requests[0].Plan) != 1 || a.requests[0].Plan[0].Status != "failed" || !slices.Contains(a.requests[0].Known, "mine_ahead") {
		t.Fatalf("requests %+v", a.requests)
	}
	if f.world.State().Step != 1 {
		t.Errorf("the suffix ran: step %d", f.world.State().Step)
	}
	if a.passes != 0 {
		t.Errorf("%d passes after one turn, want 0 (every 2)", a.passes)
	}

	// (13 = go_to 5 blocks + 3, mine_ahead ≤5.) The agent sends the suffix: it used the offer's suffix, not the
	// skill's procedure; the second turn consolidates
	block = f.act(t, "go_to x=5 z=0; mine_ahead")
	run, _ := ReadRun(f.store)
	m := run.Turns[0].Memory
	if m == nil || m.UsedBy != "t0002" || !m.SuffixUsed || len(m.Used) != 0 || m.SuffixSteps != 13 {
		t.Errorf("turn 1 memory %+v", m)
	}
	if len(a.usedCall) != 1 || !slices.Equal(a.usedCall[0], []string{"go_to", "mine_ahead"}) {
		t.Errorf("calls checked %v", a.usedCall)
	}
	if a.passes != 1 || len(run.Consolidations) != 1 || run.Consolidations[0].After != "t0002" || run.Consolidations[0].Reason != "every 2 turns" {
		t.Errorf("passes %d, consolidations %+v", a.passes, run.Consolidations)
	}
	if !strings.Contains(block, "[MEMORY] consolidated (every 2 turns): 10 episodes, 1 accepted, knowledge store 1 active, 1 change(s)") {
		t.Errorf("block:\n%s", block)
	}
	if run.Turns[1].Memory != nil {
		t.Errorf("a turn without a failure has an offer: %+v", run.Turns[1].Memory)
	}

	// a suffix that would be refused says so
	a.offer.Suffix = "fly_to x=1"
	f.act(t, "mine_ahead; dig_down n=1")
	// (mine_ahead succeeded next to the tree; make a failure)
	block = f.act(t, "craft item=pick_wood")
	if !strings.Contains(block, `[MEMORY] repaired suffix proposed but it would be refused (entry 1 fly_to(x=1): no atom or procedure "fly_to"`) {
		t.Errorf("block:\n%s", block)
	}
	// the plan calls the offered procedure's name: the Adaptor is told so
	f.act(t, "craft item=wood; craft item=stick")
	run, _ = ReadRun(f.store)
	if run.Termination != EndDone {
		t.Fatalf("termination %s", run.Termination)
	}
	if got := run.Consolidations; len(got) != 3 || got[1].After != "t0004" || got[2].Reason != "end of the run" || got[2].After != "t0005" {
		t.Errorf("consolidations %+v", got)
	}
}

// ConsolidateEvery 0: offers, never a consolidation (not even at the end).
func TestAdaptorNoConsolidation(t *testing.T) {
	a := &fakeAdaptor{}
	f := newFixture(t, logTask, Options{Adaptor: a})
	block := f.act(t, "mine_ahead")
	if !strings.Contains(block, "[MEMORY] nothing in the knowledge store matches this failure") {
		t.Errorf("block:\n%s", block)
	}
	f.act(t, "go_to x=5 z=0; mine_ahead; craft item=wood; craft item=stick")
	if err := f.sess.Stop(EndInterrupted); err != nil {
		t.Fatal(err)
	}
	run, _ := ReadRun(f.store)
	if a.passes != 0 || len(run.Consolidations) != 0 {
		t.Errorf("passes %d, consolidations %+v", a.passes, run.Consolidations)
	}
}

// A run stopped from outside consolidates once at the end.
func TestAdaptorConsolidatesAtStop(t *testing.T) {
	a := &fakeAdaptor{}
	f := newFixture(t, logTask, Options{Adaptor: a, ConsolidateEvery: 5})
	f.act(t, "wait ticks=2")
	if err := f.sess.Stop(EndInterrupted); err != nil {
		t.Fatal(err)
	}
	if err := f.sess.Stop(EndInterrupted); err != nil {
		t.Fatal(err)
	}
	run, _ := ReadRun(f.store)
	if a.passes != 1 || len(run.Consolidations) != 1 || run.Consolidations[0].Reason != "end of the run (interrupted)" || run.Consolidations[0].After != "t0001" {
		t.Errorf("passes %d, consolidations %+v", a.passes, run.Consolidations)
	}
}
