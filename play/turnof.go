package play

import (
	"sort"
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
