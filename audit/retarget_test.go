package audit

import (
	"math"
	"testing"

	"github.com/mfm-project/mfm/play"
)

func TestPlanTargets(t *testing.T) {
	for plan, want := range map[string]int{
		"go_to x=-64 z=240; mine_ahead":                                1,
		"look_at x=1 y=2 z=3; go_to x=1.5 z=2":                         2,
		`{"actions":[{"procedure":"go_to","args":{"x":-66,"z":245}}]}`: 1,
		"dig_down n=3": 0,
		"go_to x=5":    0, // no z: no coordinate
		`{"actions":[{"action":{"forward":1},"repeat":3}]}`: 0,
	} {
		got, err := PlanTargets(plan)
		if err != nil || len(got) != want {
			t.Errorf("PlanTargets(%q) = %+v, %v; want %d targets", plan, got, err, want)
		}
	}
	if _, err := PlanTargets(""); err == nil {
		t.Error("empty plan: no error")
	}
}

// TestAnalyzeRetarget on a hand-made run.
//
//	episodes (x, z; last step): e1 (0,0; 10), e2 (100,0; 20), e3 (3,4; 30),
//	e4 (200,200; 40)
//	t1 step 0   go_to 0,50                        no image      retarget (nothing ran before)
//	t2 step 50  go_to 0,50                        no image      same block: not a retarget
//	t3 step 60  go_to 2,1      opened e3's frame 25  retarget; e3 at (3,4): 3.16 <= 8: recall;
//	            null: stored by step 60: e1..e4 (all); within 8 of (2,1): e1 (2.24), e3 (3.16): 2/4
//	t4 step 70  go_to 2,1      opened e2's frame     not a retarget
//	t5 step 80  dig_down       opened now/frame.png  only another image: in neither group
//	t6 step 90  go_to 150,150  opened e4's frame 40  retarget; e4 at 70.7: no recall;
//	            null 0/4
//	t7 step 95  go_to 9,9      no image, read e1's outcome.json: retarget; reach 95-10 = 85
//
//	frame turns: t3, t4, t6: 2 retargets of 3; no image: t1, t2, t7: 2 of 3.
//	Fisher on [2 1; 2 1]: every table as probable or less: p = 1; greater:
//	P(x >= 2) with margins 3,3 / 4,2: (C(4,2)C(2,1) + C(4,3)C(2,0))/C(6,3)
//	= (12 + 4)/20 = 0.8.
//	recall: 1 of 2, null mean (0.5 + 0)/2 = 0.25; P(X >= 1 | 2, .25) =
//	1 - .75^2 = 0.4375.
//	reach: t3 frame 25 -> 60-25 = 35, t4 e2's frame 15 -> 55, t6 frame 40
//	-> 50, t7 outcome of e1 (last step 10) -> 85: median 52.5, mean 56.25,
//	max 85.
func TestAnalyzeRetarget(t *testing.T) {
	eps := []EpisodePos{
		{ID: "ep_000001", X: 0, Z: 0, LastStep: 10},
		{ID: "ep_000002", X: 100, Z: 0, LastStep: 20},
		{ID: "ep_000003", X: 3, Z: 4, LastStep: 30},
		{ID: "ep_000004", X: 200, Z: 200, LastStep: 40},
	}
	turn := func(id string, step int64, plan string) play.TurnRecord {
		return play.TurnRecord{ID: id, StepBefore: step, Plan: plan}
	}
	run := play.RunRecord{Turns: []play.TurnRecord{
		turn("t1", 0, "go_to x=0 z=50"),
		turn("t2", 50, "go_to x=0.2 z=49.8"),
		turn("t3", 60, "go_to x=2 z=1"),
		turn("t4", 70, "go_to x=2 z=1"),
		turn("t5", 80, "dig_down n=1"),
		turn("t6", 90, "go_to x=150 z=150"),
		turn("t7", 95, "go_to x=9 z=9"),
	}}
	reads := map[string][]play.MemoryRead{
		"t3": {{Path: "/episodes/ep_000003/frames/000025.png", Kind: "frame"}},
		"t4": {{Path: "/episodes/ep_000002/frames/000015.png", Kind: "frame"}, {Path: "/episodes/ep_000002/frames", Kind: "list"}},
		"t5": {{Path: "/now/frame.png", Kind: "now"}},
		"t6": {{Path: "/episodes/ep_000004/frames/000040.png", Kind: "frame"}},
		"t7": {{Path: "/episodes/ep_000001/outcome.json", Kind: "episode"}},
	}
	r := AnalyzeRetarget(run, reads, eps)
	if r.Frame != (RateGroup{3, 2, 2.0 / 3}) || r.NoImage != (RateGroup{3, 2, 2.0 / 3}) || r.OnlyOtherImage != 1 {
		t.Errorf("groups: frame %+v no image %+v other %d", r.Frame, r.NoImage, r.OnlyOtherImage)
	}
	if !near(r.FisherTwoSided, 1) || !near(r.FisherGreater, 0.8) {
		t.Errorf("Fisher %v %v, want 1 0.8", r.FisherTwoSided, r.FisherGreater)
	}
	if r.RecallTrials != 2 || r.Recalls != 1 || !near(r.NullMean, 0.25) || !near(r.BinomialP, 0.4375) {
		t.Errorf("recall %d/%d null %v p %v, want 1/2 0.25 0.4375", r.Recalls, r.RecallTrials, r.NullMean, r.BinomialP)
	}
	if r.Reach.Reads != 4 || r.Reach.Median != 52.5 || !near(r.Reach.Mean, 56.25) || r.Reach.Max != 85 {
		t.Errorf("reach %+v, want 4 reads, median 52.5, mean 56.25, max 85", r.Reach)
	}
	if r.PerTurn[1].Retarget || !r.PerTurn[0].Retarget || r.PerTurn[3].Retarget || !r.PerTurn[2].Recall || r.PerTurn[5].Recall {
		t.Errorf("per turn %+v", r.PerTurn)
	}
	if math.Abs(r.PerTurn[2].Null-0.5) > 1e-12 {
		t.Errorf("t3 null %v, want 0.5", r.PerTurn[2].Null)
	}
}

// TestRetargetOnCommittedRun reads the committed LLM memory-return run
// with its access log: reads are attributed to the turn that followed
// them, and a repeated destination is not a retarget.
func TestRetargetOnCommittedRun(t *testing.T) {
	r, err := Retarget("../examples/runs/llm-memory-return/store", "../examples/runs/llm-memory-return/access.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]RetargetTurn{}
	for _, x := range r.PerTurn {
		byID[x.ID] = x
	}
	// t0002 (go_to -64,240) followed a look at ep_000001's frames; t0007
	// repeats t0006's go_to -67,240
	if t2 := byID["t0002"]; !t2.OpenedFrame || !t2.Retarget || len(t2.LookedAt) != 1 || t2.LookedAt[0] != "ep_000001" {
		t.Errorf("t0002: %+v", t2)
	}
	if byID["t0007"].Retarget {
		t.Errorf("t0007 repeats t0006's destination: %+v", byID["t0007"])
	}
	if r.Frame.Turns+r.NoImage.Turns+r.OnlyOtherImage != r.Turns {
		t.Errorf("groups %d + %d + %d != %d turns", r.Frame.Turns, r.NoImage.Turns, r.OnlyOtherImage, r.Turns)
	}
	if _, err := Retarget("../testdata/paper-run/store", ""); err == nil {
		t.Error("a store without a play run.json: no error")
	}
}

// FuzzParseAccessLog: any input decodes or fails cleanly, every row kept
// has a path and a time, and rows plus skipped lines cover the input.
func FuzzParseAccessLog(f *testing.F) {
	f.Add([]byte(`{"time":"2026-12-04T01:42:45.446562118Z","path":"/episodes/ep_000018/frames/000300.png","kind":"frame","pid":27633}` + "\n"))
	f.Add([]byte("{\"time\":\"yesterday\",\"path\":\"/\"}\nnot json\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, skipped, err := ParseAccessLog(b)
		if err != nil {
			if len(rows) != 0 {
				t.Fatalf("error with %d rows", len(rows))
			}
			return
		}
		for _, r := range rows {
			if r.Path == "" || r.Time == "" {
				t.Fatalf("row without path or time: %+v", r)
			}
		}
		if skipped < 0 {
			t.Fatal("negative skipped")
		}
	})
}
