package fs

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mfm-project/mfm/episodes"
)

// AccessFileName is the access log's name under the store's .mfm/.
const AccessFileName = "access.jsonl"

// AccessRecord is one row of store/.mfm/access.jsonl: what the agent
// opened through the mount, when, and what kind of thing it was.
type AccessRecord struct {
	Time string `json:"time"` // RFC 3339 with nanoseconds, UTC
	Path string `json:"path"` // path inside the mount, "/episodes/ep_000012/action.json"
	Kind string `json:"kind"` // see kindOfPath: episode, frame, view, sheet, query, map, index, grid, log, readme, now, note, note-write, list, errors
	Pid  uint32 `json:"pid,omitempty"`
}

// accessLog appends AccessRecords from a goroutine of its own: handlers
// only do a non-blocking channel send, so a slow disk never stalls a
// FUSE request; the writer batches what queued up (accessBatchWait). A
// burst beyond the buffer is counted and dropped.
// Repeats of the same path and kind within a second are folded.
type accessLog struct {
	off     bool // --no-access-log
	ch      chan accessEntry
	done    chan struct{}
	once    sync.Once
	dropped atomic.Int64
	log     *slog.Logger

	mu   sync.Mutex
	last map[string]time.Time
}

func newAccessLog(store *episodes.Store, log *slog.Logger, off bool) *accessLog {
	a := &accessLog{ch: make(chan accessEntry, 8192), done: make(chan struct{}), log: log, last: map[string]time.Time{}}
	if off {
		close(a.done)
		a.ch = nil
		a.off = true
		return a
	}
	go a.run(store)
	return a
}

// on reports whether records are kept (callers skip computing a path
// when not).
func (a *accessLog) on() bool { return a != nil && !a.off }

// record notes that the caller in ctx opened path.
func (a *accessLog) record(ctx context.Context, path, kind string) {
	if !a.on() {
		return
	}
	var pid uint32
	if c, ok := fuse.FromContext(ctx); ok {
		pid = c.Pid
	}
	a.add(path, kind, pid)
}

// add notes that process pid opened path.
func (a *accessLog) add(path, kind string, pid uint32) {
	if !a.on() {
		return
	}
	now := time.Now()
	r := accessEntry{at: now, path: path, kind: kind, pid: pid}
	key := kind + "\x00" + path
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

// mountOpens records the opens the fanotify watcher of a mount of its
// own sees (its opens do not reach the daemon, see cachedmount.go). Its
// methods run on the watcher's goroutine only.
type mountOpens struct {
	m      *mfs
	root   *gofs.Inode // the mount's tree
	prefix string      // where the mount is in the store's ("/episodes")
	// seen keeps the record's path and kind by path in the mount: the
	// node at a path of these mounts is always of one kind (a backing
	// file, a view, cited-by), so the walk of the tree is made once per
	// path, not once per open (it was a seventh of the daemon's CPU in a
	// scan of frames, perf).
	seen map[string]accessName
}

// accessName is a record's path and kind.
type accessName struct{ path, kind string }

// record notes that process pid opened p, the path in the mount ("/"
// for its root). The kind is the one the node at p gives (the kernel
// holds the node of a file it just opened, so it is in the tree); a path
// no longer in the tree is classified by its name.
func (o *mountOpens) record(p string, pid int32) {
	name, ok := o.seen[p]
	if !ok {
		name.path = o.prefix + p
		if p == "/" {
			name.path = o.prefix
		}
		if n := nodeAt(o.root, p); n != nil {
			if k, ok := n.Operations().(interface{ accessKind(string) string }); ok {
				name.kind = k.accessKind(name.path)
			}
		}
		if name.kind != "" {
			if len(o.seen) >= maxKeptPaths {
				clear(o.seen)
			}
			o.seen[p] = name
		} else {
			name.kind = kindOfPath(name.path, "episode")
		}
	}
	o.m.access.add(name.path, name.kind, uint32(pid))
}

// nodeAt walks the tree of known nodes below root to p ("/a/b"); nil if
// a component is not (or no longer) known.
func nodeAt(root *gofs.Inode, p string) *gofs.Inode {
	n := root
	for _, c := range strings.Split(strings.Trim(p, "/"), "/") {
		if c == "" {
			continue
		}
		if n = n.GetChild(c); n == nil {
			return nil
		}
	}
	return n
}

// accessEntry is a record as handlers queue it; the writer formats it.
type accessEntry struct {
	at         time.Time
	path, kind string
	pid        uint32
}

// accessBatchWait is how long the writer lets records gather after a
// write: while it sleeps, handlers' sends do not wake it, and a burst of
// opens (grep -r, a scan of frames) costs one write(2) per batch instead
// of a goroutine wake-up and a write per open.
const accessBatchWait = 20 * time.Millisecond

func (a *accessLog) run(store *episodes.Store) {
	defer close(a.done)
	var app *episodes.Appender
	defer func() {
		if app != nil {
			app.Close()
		}
	}()
	var buf []byte
	for r := range a.ch {
		if app == nil {
			p, err := store.MetaPath(AccessFileName)
			if err == nil {
				app, err = episodes.OpenAppender(p)
			}
			if err != nil {
				a.log.Warn("access log: cannot open; records are dropped", slog.Any("err", err))
				for range a.ch {
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
			case r, ok := <-a.ch:
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
// usual case: json.Marshal was most of the writer's time in a scan of
// frames) is written directly; any other goes through json.Marshal.
func appendAccessRow(buf []byte, e accessEntry) []byte {
	if !plainJSON(e.path) || !plainJSON(e.kind) {
		b, _ := json.Marshal(AccessRecord{Time: e.at.UTC().Format(time.RFC3339Nano), Path: e.path, Kind: e.kind, Pid: e.pid})
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

// close flushes and stops the log; later records are ignored.
func (a *accessLog) close() {
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

// kindOfPath classifies an opened mount path for the access log.
func kindOfPath(p, def string) string {
	switch {
	case strings.HasSuffix(p, ".png") || strings.HasSuffix(p, ".jpg") || strings.HasSuffix(p, ".jpeg"):
		if def == "episode" {
			return "frame"
		}
	}
	return def
}
