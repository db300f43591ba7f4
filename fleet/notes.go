package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mfm-project/mfm/internal/lru"
)

// notesChannel is the LISTEN/NOTIFY channel a change of an agent's shared
// notes is announced on (payload: the agent's name), in the transaction
// that makes it.
const notesChannel = "mfm_notes"

// notesTimeout bounds the notes look-ups a listing makes, so a database
// that is down slows ls agents/ by at most this much.
const notesTimeout = 500 * time.Millisecond

// notesBodyBudget bounds the bytes of note bodies a mount keeps: the
// most recently read ones, each at most maxNoteSize.
const notesBodyBudget = 32 << 20

// notesCache holds the other agents' shared notes as last read from
// PostgreSQL: which agents have notes, each agent's paths and sizes, and
// the most recently read bodies (notesBodyBudget bytes of them). An
// entry is trusted while the follower LISTENs on notesChannel and no
// notification has named its agent since it was read; otherwise the
// next look-up reads it again. While the follower is not listening (not
// connected yet, or reconnecting) every look-up asks the database, since
// a change would go unannounced; when the database does not answer, what
// is held is served.
type notesCache struct {
	db   *pgxpool.Pool
	self string
	log  *slog.Logger

	mu        sync.Mutex
	listening bool
	epoch     uint64            // bumped when listening starts or stops
	ver       map[string]uint64 // per agent, bumped by its notifications
	listVer   uint64            // bumped by every notification
	list      *noteList
	by        map[string]*agentNotes
	down      *outage // look-ups failing (logged once)

	// bodies holds note bodies by agent, path, size and update time, so
	// a body is found only for the version of the note it was read as.
	bodies *lru.Cache[[]byte]

	queries atomic.Int64 // queries sent (tests)
}

// noteList is the agents with notes, as read at (epoch, ver).
type noteList struct {
	names      []string
	epoch, ver uint64
}

// agentNotes is one agent's notes, as read at (epoch, ver).
type agentNotes struct {
	paths      []string // sorted
	notes      map[string]*note
	epoch, ver uint64
}

type note struct {
	size    int64
	updated time.Time // changes with the body
}

func newNotesCache(db *pgxpool.Pool, self string, log *slog.Logger) *notesCache {
	return &notesCache{db: db, self: self, log: log, ver: map[string]uint64{}, by: map[string]*agentNotes{},
		down:   &outage{what: "other agents' notes", log: log},
		bodies: lru.New(notesBodyBudget, func(b []byte) int64 { return int64(len(b)) })}
}

// bodyKey is the key of the body of agent's note at path as n describes it.
func bodyKey(agent, path string, n *note) string {
	return fmt.Sprintf("%s\x00%s\x00%d\x00%d", agent, path, n.size, n.updated.UnixNano())
}

// setListening is called by the follower when its LISTEN on notesChannel
// starts (true) and ends (false): either way what is held may have
// changed unannounced, so it is all read again before it is trusted.
func (c *notesCache) setListening(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.listening = on
	c.epoch++
}

// invalidate is called for a notification that agent's notes changed.
func (c *notesCache) invalidate(agent string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ver[agent]++
	c.listVer++
}

// agents lists the other agents with shared notes.
func (c *notesCache) agents(ctx context.Context) ([]string, error) {
	c.mu.Lock()
	l := c.list
	if l != nil && c.listening && l.epoch == c.epoch && l.ver == c.listVer {
		c.mu.Unlock()
		return l.names, nil
	}
	epoch, ver := c.epoch, c.listVer
	c.mu.Unlock()
	names, err := c.loadAgents(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.down.report(err)
	if err != nil {
		if l != nil {
			return l.names, nil
		}
		return nil, err
	}
	c.list = &noteList{names: names, epoch: epoch, ver: ver}
	return names, nil
}

func (c *notesCache) loadAgents(ctx context.Context) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, notesTimeout)
	defer cancel()
	c.queries.Add(1)
	rows, err := c.db.Query(ctx, `SELECT DISTINCT agent FROM mfm_notes WHERE agent <> $1`, c.self)
	if err != nil {
		return nil, err
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	return names, nil
}

// has reports whether agent has shared notes.
func (c *notesCache) has(ctx context.Context, agent string) bool {
	if agent == c.self {
		return false
	}
	names, _ := c.agents(ctx)
	i := sort.SearchStrings(names, agent)
	return i < len(names) && names[i] == agent
}

// notesOf returns agent's notes (paths and sizes).
func (c *notesCache) notesOf(ctx context.Context, agent string) (*agentNotes, error) {
	c.mu.Lock()
	e := c.by[agent]
	if e != nil && c.listening && e.epoch == c.epoch && e.ver == c.ver[agent] {
		c.mu.Unlock()
		return e, nil
	}
	epoch, ver := c.epoch, c.ver[agent]
	c.mu.Unlock()
	fresh, err := c.loadNotes(ctx, agent)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.down.report(err)
	if err != nil {
		if e != nil {
			return e, nil
		}
		return nil, err
	}
	fresh.epoch, fresh.ver = epoch, ver
	c.by[agent] = fresh
	return fresh, nil
}

func (c *notesCache) loadNotes(ctx context.Context, agent string) (*agentNotes, error) {
	ctx, cancel := context.WithTimeout(ctx, notesTimeout)
	defer cancel()
	c.queries.Add(1)
	rows, err := c.db.Query(ctx, `SELECT path, length(body), updated FROM mfm_notes WHERE agent = $1 ORDER BY path`, agent)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	e := &agentNotes{notes: map[string]*note{}}
	for rows.Next() {
		var p string
		n := &note{}
		if err := rows.Scan(&p, &n.size, &n.updated); err != nil {
			return nil, err
		}
		e.paths = append(e.paths, p)
		e.notes[p] = n
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return e, nil
}

// body returns the body of agent's note at path.
func (c *notesCache) body(ctx context.Context, agent, path string) ([]byte, error) {
	e, err := c.notesOf(ctx, agent)
	if err != nil {
		return nil, fmt.Errorf("agents/%s/mine/%s: the shared database did not answer: %w", agent, path, err)
	}
	n := e.notes[path] // an agentNotes is not changed once read
	if n == nil {
		return nil, errNotExist
	}
	key := bodyKey(agent, path, n)
	if b, ok := c.bodies.Get(key); ok {
		return b, nil
	}
	var body []byte
	var updated time.Time
	c.queries.Add(1)
	err = c.db.QueryRow(ctx, `SELECT body, updated FROM mfm_notes WHERE agent = $1 AND path = $2`, agent, path).Scan(&body, &updated)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errNotExist // removed since it was listed
	}
	if err != nil {
		return nil, fmt.Errorf("agents/%s/mine/%s: the shared database did not answer: %w", agent, path, err)
	}
	if updated.Equal(n.updated) && int64(len(body)) == n.size {
		c.bodies.Put(key, body)
	}
	return body, nil
}
