package play

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mfm-project/mfm/task"
)

// TestFrozenMemory: with mine/ read-only the brief and the [END] line say
// the memory is frozen and ask for no notes; without, they ask for them.
func TestFrozenMemory(t *testing.T) {
	tk, err := task.Parse([]byte(logTask))
	if err != nil {
		t.Fatal(err)
	}
	w := &SimWorld{}
	for _, frozen := range []bool{false, true} {
		brief, err := Brief(BriefInfo{Task: tk, Atoms: w.Atoms(), RawKeys: w.RawKeys(), Mount: "/mfm", MineFrozen: frozen})
		if err != nil {
			t.Fatal(err)
		}
		asks := strings.Contains(brief, "write your notes") || strings.Contains(brief, "Write your memory") || strings.Contains(brief, "write down what they learn")
		says := strings.Contains(brief, "The memory is frozen for this run") && strings.Contains(brief, "`/mfm/mine/` is mounted read-only")
		if asks == frozen || says != frozen {
			t.Errorf("frozen=%v: the brief asks for notes %v, says the memory is frozen %v:\n%s", frozen, asks, says, brief)
		}

		f := newFixture(t, `{"instruction": "walk", "budget": 10, "milestones": [{"name": "far", "when": "away>=50"}]}`, Options{MineFrozen: frozen})
		block := f.act(t, "go_to x=20 z=0")
		end := ""
		for _, l := range strings.Split(block, "\n") {
			if strings.HasPrefix(l, "[END] ") && !strings.Contains(l, "budget is spent") {
				end = l
			}
		}
		wantEnd := "[END] Write your notes now in "
		if frozen {
			wantEnd = "[END] The memory is frozen for this run: " + f.store.Path("mine") + " is read-only, so there are no notes to write"
		}
		if !strings.HasPrefix(end, wantEnd) {
			t.Errorf("frozen=%v: the [END] line is %q, want it to start %q", frozen, end, wantEnd)
		}
		_, _, err = f.sess.Act(context.Background(), "wait ticks=1", "test")
		if !errors.Is(err, ErrEnded) || strings.Contains(err.Error(), "Write your notes") == frozen {
			t.Errorf("frozen=%v: act after the end: %v", frozen, err)
		}
	}
}

// TestBriefFile: BRIEF.md and AGENTS.md each say in their first line that
// the other holds the same brief, and then hold the brief unchanged.
func TestBriefFile(t *testing.T) {
	const brief = "# Your task: x\n\nbody\n"
	for _, c := range []struct{ name, other string }{{"BRIEF.md", "AGENTS.md"}, {"AGENTS.md", "BRIEF.md"}} {
		got := BriefFile(c.name, brief)
		first, rest, _ := strings.Cut(got, "\n")
		if !strings.Contains(first, c.name+" and "+c.other) || !strings.Contains(first, "same brief") {
			t.Errorf("%s: first line %q does not say %s holds the same brief", c.name, first, c.other)
		}
		if rest != "\n"+brief {
			t.Errorf("%s: after the first line %q, want a blank line and the brief", c.name, rest)
		}
	}
	if got := BriefFile("other.md", brief); got != brief {
		t.Errorf("a name not in BriefFiles got %q", got)
	}
}

// TestBriefShared: a brief for a shared mount names the agent, agents/
// and the agent: query terms; an unshared one says nothing of them.
func TestBriefShared(t *testing.T) {
	tk, err := task.Parse([]byte(logTask))
	if err != nil {
		t.Fatal(err)
	}
	w := &SimWorld{}
	for _, as := range []string{"", "bob"} {
		brief, err := Brief(BriefInfo{Task: tk, Atoms: w.Atoms(), RawKeys: w.RawKeys(), Mount: "/mfm", SharedAs: as})
		if err != nil {
			t.Fatal(err)
		}
		says := strings.Contains(brief, "you are `bob`") && strings.Contains(brief, "`/mfm/agents/NAME/`") && strings.Contains(brief, "`agent:NAME` or `agent:all`")
		if says != (as != "") || (as == "" && strings.Contains(brief, "agents/")) {
			t.Errorf("shared as %q: the brief says so %v:\n%s", as, says, brief)
		}
	}
}
