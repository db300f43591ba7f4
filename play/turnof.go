package play

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// ReadBefore names the turn a memory read (a row of the mount's
// access.jsonl, by its time) belongs to: the first turn that started
// after it — the plan the read came before ("" when no turn followed it).
// During a turn's own execution, reads are attributed to the next turn
// too: the agent reads while its plan runs to choose the next one.
func ReadBefore(run RunRecord, at time.Time) string {
	i := sort.Search(len(run.Turns), func(i int) bool {
		t, err := time.Parse(time.RFC3339Nano, run.Turns[i].Started)
		return err == nil && t.After(at)
	})
	if i == len(run.Turns) {
		return ""
	}
	return run.Turns[i].ID
}

// TurnOf names the turn read r (logged at time at) belongs to: by the
// turn label the mount gave it when there is one (TurnOfRead), else by
// its time (ReadBefore).
func TurnOf(run RunRecord, r MemoryRead, at time.Time) string {
	if r.Turn != "" {
		return TurnOfRead(run, r.Turn)
	}
	return ReadBefore(run, at)
}

// TurnOfRead names the turn a memory read belongs to by the turn label
// the access log gave it (Session.TurnLabel): a read "before t0004"
// belongs to t0004, a read during t0003 to the turn after t0003 (the
// agent reads while its plan runs to choose the next one), as ReadBefore
// does by time; "" when that turn has not happened (yet) or the run had
// ended.
func TurnOfRead(run RunRecord, label string) string {
	id, before := strings.CutPrefix(label, "before ")
	var n int
	if _, err := fmt.Sscanf(id, "t%d", &n); err != nil || n < 1 || strings.HasPrefix(label, "after ") || fmt.Sprintf("t%04d", n) != id {
		return ""
	}
	if !before {
		n++
	}
	if n < 1 || n > len(run.Turns) || run.Turns[n-1].ID != fmt.Sprintf("t%04d", n) {
		return ""
	}
	return run.Turns[n-1].ID
}
