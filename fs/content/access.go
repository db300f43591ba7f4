package content

import (
	"encoding/json"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mfm-project/mfm/episodes"
)

// AccessFileName is the access log's name under the store's .mfm/.
const AccessFileName = "access.jsonl"

// AccessRecord is one row of store/.mfm/access.jsonl: what the agent
// opened through the mount, when, and what kind of thing it was.
type AccessRecord struct {
	Time string `json:"time"` // RFC 3339 with nanoseconds, UTC
	Path string `json:"path"` // path inside the mount, "/episodes/ep_000012/action.json"
	Kind string `json:"kind"` // see KindOfPath: episode, frame, view, sheet, query, map, index, grid, log, readme, now, note, note-write, list, errors
	Pid  uint32 `json:"pid,omitempty"`
	// Turn is the play session's turn when the row was added (see
	// AccessLog.SetTurn): "t0003" while that turn runs, "before t0004"
	// between turns, "after t0009" once the run has ended; absent
	// without a session.
	Turn string `json:"turn,omitempty"`
}

// AccessLog appends AccessRecords from a goroutine of its own: Add only
// does a non-blocking channel send, so a slow disk never stalls a
// filesystem request; the writer batches what queued up
// (accessBatchWait). A burst beyond the buffer is counted and dropped.
// Repeats of the same path and kind within a second are folded. Its
// methods are safe for concurrent use, and on a nil *AccessLog.
type AccessLog struct {
	off     bool // --no-access-log
	ch      chan accessEntry
	done    chan struct{}
	once    sync.Once
	dropped atomic.Int64
	log     *slog.Logger

	turn func() string // the current turn's label (SetTurn), or nil

	mu   sync.Mutex
	last map[string]time.Time
}

// SetTurn makes every record carry turn() as its Turn (a play session's
// current turn). Call it before the log is used; turn must be fast and
// never block (it runs inside filesystem requests).
func (a *AccessLog) SetTurn(turn func() string) {
	if a != nil {
		a.turn = turn
	}
}

// NewAccessLog starts the access log of store (in its .mfm/, opened at
// the first record); with off, it keeps nothing. Warnings go to log.
// Close it to flush.
func NewAccessLog(store *episodes.Store, log *slog.Logger, off bool) *AccessLog {
	a := &AccessLog{ch: make(chan accessEntry, 8192), done: make(chan struct{}), log: log, last: map[string]time.Time{}}
	if off {
		close(a.done)
		a.ch = nil
		a.off = true
		return a
	}
	go a.run(store, a.ch)
	return a
}

// On reports whether records are kept (callers skip computing a path
// when not).
func (a *AccessLog) On() bool { return a != nil && !a.off }

// Add notes that process pid (0: unknown) opened path, a thing of kind.
func (a *AccessLog) Add(path, kind string, pid uint32) {
	if !a.On() {
		return
	}
	now := time.Now()
	r := accessEntry{at: now, path: path, kind: kind, pid: pid}
	if a.turn != nil {
		r.turn = a.turn()
	}
	key := kind + "\x00" + path + "\x00" + r.turn
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ch == nil {
		return
	}
	if t, ok := a.last[key]; ok && now.Sub(t) < time.Second {
		return
	}
	if len(a.last) > 4096 {
		clear(a.last)
	}
	a.last[key] = now
	select { // never blocks: the mutex is held only for this send
	case a.ch <- r:
	default:
		a.dropped.Add(1)
	}
}

// accessEntry is a record as Add queues it; the writer formats it.
type accessEntry struct {
	at         time.Time
	path, kind string
	pid        uint32
	turn       string
}

// accessBatchWait is how long the writer lets records gather after a
// write: while it sleeps, Add's sends do not wake it, and a burst of
// opens (grep -r, a scan of frames) costs one write(2) per batch instead
// of a goroutine wake-up and a write per open.
const accessBatchWait = 20 * time.Millisecond

// run is the writer. It reads ch, the channel as NewAccessLog made it:
// Close sets a.ch to nil, possibly before run has started.
func (a *AccessLog) run(store *episodes.Store, ch <-chan accessEntry) {
	defer close(a.done)
	var app *episodes.Appender
	defer func() {
		if app != nil {
			app.Close()
		}
	}()
	var buf []byte
	for r := range ch {
		if app == nil {
			p, err := store.MetaPath(AccessFileName)
			if err == nil {
				app, err = episodes.OpenAppender(p)
			}
			if err != nil {
				a.log.Warn("access log: cannot open; records are dropped", slog.Any("err", err))
				for range ch {
				}
				return
			}
		}
		// Everything queued so far, as complete rows in one write.
		buf = appendAccessRow(buf[:0], r)
		closed := false
	drain:
		for len(buf) < 1<<20 {
			select {
			case r, ok := <-ch:
				if !ok {
					closed = true
					break drain
				}
				buf = appendAccessRow(buf, r)
			default:
				break drain
			}
		}
		if err := app.AppendLines(buf); err != nil {
			a.log.Warn("access log: append", slog.Any("err", err))
		}
		if closed {
			break
		}
		time.Sleep(accessBatchWait)
	}
	if n := a.dropped.Load(); n > 0 {
		a.log.Warn("access log: records dropped under load", slog.Int64("dropped", n))
	}
}

// appendAccessRow appends e as a line of JSON, the AccessRecord
// json.Marshal gives. A record whose strings need no escaping (the
// usual case, and where json.Marshal would cost the most: a scan of
// frames) is written directly; any other goes through json.Marshal.
func appendAccessRow(buf []byte, e accessEntry) []byte {
	if !plainJSON(e.path) || !plainJSON(e.kind) || !plainJSON(e.turn) {
		b, _ := json.Marshal(AccessRecord{Time: e.at.UTC().Format(time.RFC3339Nano), Path: e.path, Kind: e.kind, Pid: e.pid, Turn: e.turn})
		return append(append(buf, b...), '\n')
	}
	buf = append(buf, `{"time":"`...)
	buf = e.at.UTC().AppendFormat(buf, time.RFC3339Nano)
	buf = append(buf, `","path":"`...)
	buf = append(buf, e.path...)
	buf = append(buf, `","kind":"`...)
	buf = append(buf, e.kind...)
	buf = append(buf, '"')
	if e.pid != 0 {
		buf = append(buf, `,"pid":`...)
		buf = strconv.AppendUint(buf, uint64(e.pid), 10)
	}
	if e.turn != "" {
		buf = append(buf, `,"turn":"`...)
		buf = append(buf, e.turn...)
		buf = append(buf, '"')
	}
	return append(buf, "}\n"...)
}

// plainJSON reports whether json.Marshal writes s as it is between
// quotes: printable ASCII without the characters it escapes.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c >= 0x7f, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// Close flushes and stops the log; later records are ignored.
func (a *AccessLog) Close() {
	if a == nil {
		return
	}
	a.once.Do(func() {
		a.mu.Lock()
		ch := a.ch
		a.ch = nil
		a.mu.Unlock()
		if ch != nil {
			close(ch)
		}
		<-a.done
	})
}

// KindOfPath classifies an opened mount path for the access log: an
// image under a tree of kind "episode" is a "frame"; anything else keeps
// def.
func KindOfPath(p, def string) string {
	switch {
	case strings.HasSuffix(p, ".png") || strings.HasSuffix(p, ".jpg") || strings.HasSuffix(p, ".jpeg"):
		if def == "episode" {
			return "frame"
		}
	}
	return def
}
