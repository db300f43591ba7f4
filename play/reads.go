package play

import (
	"encoding/json"
	"os"
	"time"

	"github.com/mfm-project/mfm/episodes"
)

// AccessLogName is the mount's access log under the store's .mfm/ (the
// fs package writes it: one JSON row per path the agent opened).
const AccessLogName = "access.jsonl"

// MemoryRead is one row of the access log as run.json keeps it. Turn is
// the session's TurnLabel when the mount logged the read ("t0003",
// "before t0004", "after t0009"; empty from a mount without the session).
type MemoryRead struct {
	Time string `json:"time"`
	Path string `json:"path"`
	Kind string `json:"kind"`
	Turn string `json:"turn,omitempty"`
}

// readLog follows the store's access log from where it stood when the
// session began (earlier runs' reads are not this run's).
type readLog struct {
	path  string
	off   int64
	reads []MemoryRead
	times []time.Time
}

func newReadLog(s *episodes.Store) *readLog {
	l := &readLog{path: s.Path(episodes.MetaDir, AccessLogName)}
	if fi, err := os.Stat(l.path); err == nil {
		l.off = fi.Size()
	}
	return l
}

// follow reads the rows appended since the last call.
func (l *readLog) follow() error {
	off, err := episodes.ScanFile(l.path, l.off, func(line episodes.Line) error {
		var r MemoryRead
		if json.Unmarshal(line.Data, &r) != nil || r.Path == "" {
			return nil
		}
		at, err := time.Parse(time.RFC3339Nano, r.Time)
		if err != nil {
			return nil
		}
		l.reads = append(l.reads, r)
		l.times = append(l.times, at)
		return nil
	})
	l.off = off
	return err
}

// attribute sets each turn's ReadsBefore (the reads that came before its
// plan, after the previous turn's began: TurnOfRead, or ReadBefore by
// time for a row without a turn) and returns the reads no turn followed
// (during the last turn and after it).
func (l *readLog) attribute(run *RunRecord) []MemoryRead {
	byTurn := map[string][]MemoryRead{}
	var after []MemoryRead
	for i, r := range l.reads {
		if id := TurnOf(*run, r, l.times[i]); id != "" {
			byTurn[id] = append(byTurn[id], r)
		} else {
			after = append(after, r)
		}
	}
	for i := range run.Turns {
		run.Turns[i].ReadsBefore = byTurn[run.Turns[i].ID]
	}
	return after
}
