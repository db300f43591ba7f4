package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// gapWait is how long a hole in the seq order is waited for before it is
// taken as a number that will never commit (a rolled-back or conflicting
// insert burns one). seq is assigned at insert, not commit, so a row with
// a smaller seq can commit after a larger one has been read.
const gapWait = 5 * time.Second

// reconcileEvery is how often the follower compares its row counts with
// the database's and reloads what differs: the backstop for a row whose
// commit came after its gap was given up.
const reconcileEvery = 30 * time.Second

// follower keeps the catalog up to date with the other agents' rows:
// LISTEN for announcements, then read the rows past its cursor.
type follower struct {
	db   *pgxpool.Pool
	url  string
	self string
	cat  *catalog
	log  *slog.Logger
	mu   sync.Mutex
	safe int64               // every seq <= safe has been read or given up
	have map[int64]bool      // seqs > safe already read
	gaps map[int64]time.Time // holes > safe, when first seen
	top  int64               // the highest seq read
	// announced counts the rows added from their announcement, without
	// reading the database.
	announced atomic.Int64
	ready     chan struct{} // closed after the first full load
	once      sync.Once
	// onRow, when set, is called for each new row (agent, life, id).
	onRow func(agent string, life int, id string)
	// before runs before each connection's catch-up (creates the schema).
	before func(context.Context) error
	// notesListening, when set, is told when the LISTEN on notesChannel
	// starts (true) and ends (false), and onNotes is called with the
	// payload (an agent's name) of each notification on it.
	notesListening func(on bool)
	onNotes        func(agent string)
}

func newFollower(db *pgxpool.Pool, url, self string, cat *catalog, log *slog.Logger) *follower {
	return &follower{db: db, url: url, self: self, cat: cat, log: log,
		have: map[int64]bool{}, gaps: map[int64]time.Time{}, ready: make(chan struct{})}
}

// run follows until ctx ends, reconnecting with backoff when the
// database goes away.
func (f *follower) run(ctx context.Context) {
	var backoff time.Duration
	for ctx.Err() == nil {
		err := f.listen(ctx)
		if ctx.Err() != nil {
			return
		}
		backoff = min(max(2*backoff, 50*time.Millisecond), 2*time.Second)
		f.log.Debug("fleet: follower reconnecting", "err", err, "in", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
	}
}

// listen holds one LISTEN connection: catch up, then fetch on each
// announcement (and every second without one, for gaps).
func (f *follower) listen(ctx context.Context) error {
	if f.before != nil {
		if err := f.before(ctx); err != nil {
			return err
		}
	}
	conn, err := pgx.Connect(ctx, f.url)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		return err
	}
	if f.notesListening != nil {
		if _, err := conn.Exec(ctx, "LISTEN "+notesChannel); err != nil {
			return err
		}
		f.notesListening(true)
		defer f.notesListening(false)
	}
	if err := f.fetch(ctx); err != nil {
		return err
	}
	f.once.Do(func() { close(f.ready) })
	lastReconcile := time.Now()
	for {
		wctx, cancel := context.WithTimeout(ctx, time.Second)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		if err != nil && ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil && !conn.IsClosed() && wctx.Err() == nil {
			return err
		}
		if conn.IsClosed() {
			return fmt.Errorf("listen connection closed")
		}
		// A row announced whole is added as it is; a seq alone, an
		// unreadable payload or a second without announcements reads the
		// rows past the cursor (no waiting for more announcements first:
		// a burst costs a few empty reads, ~0.2 ms each, rather than a
		// delay on every row).
		announced := false
		if n != nil && n.Channel == notesChannel {
			if f.onNotes != nil {
				f.onNotes(n.Payload)
			}
			announced = true // a change of notes, not a row: nothing to read
		}
		if n != nil && n.Channel == notifyChannel {
			r, whole, perr := parseAnnouncement(n.Payload)
			if perr != nil {
				f.log.Debug("fleet: unreadable announcement, reading the database", "err", perr)
			}
			if whole {
				if err := f.addAnnounced(r); err != nil {
					return err
				}
				announced = true
			}
		}
		if !announced {
			if err := f.fetch(ctx); err != nil {
				return err
			}
		}
		if time.Since(lastReconcile) > reconcileEvery {
			if err := f.reconcile(ctx); err != nil {
				return err
			}
			lastReconcile = time.Now()
		}
	}
}

// fetch reads the rows past the cursor.
func (f *follower) fetch(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for {
		rows, err := f.db.Query(ctx, `SELECT seq, agent, life, id, row, files FROM mfm_episodes
			WHERE seq > $1 ORDER BY seq LIMIT 10000`, f.safe)
		if err != nil {
			return fmt.Errorf("follow: %w", err)
		}
		n := 0
		var maxSeq int64
		for rows.Next() {
			var seq int64
			var agent, id, row string
			var life int
			var files []byte
			if err := rows.Scan(&seq, &agent, &life, &id, &row, &files); err != nil {
				rows.Close()
				return fmt.Errorf("follow: %w", err)
			}
			n++
			maxSeq = max(maxSeq, seq)
			if f.have[seq] {
				continue
			}
			var fl []fileEntry
			if agent != f.self {
				if err := json.Unmarshal(files, &fl); err != nil {
					f.have[seq] = true
					f.log.Warn("fleet: shipped row with unreadable file list skipped", "agent", agent, "id", id, "err", err)
					continue
				}
			}
			if _, err := f.take(seq, agent, life, id, []byte(row), fl); err != nil {
				rows.Close()
				return err
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("follow: %w", err)
		}
		f.advance(maxSeq)
		if n < 10000 {
			return nil
		}
	}
}

// addAnnounced adds a row announced whole, as fetch would have read it.
func (f *follower) addAnnounced(r shippedRow) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.have[r.Seq] {
		return nil
	}
	added, err := f.take(r.Seq, r.Agent, r.Life, r.ID, []byte(r.Row), r.Files)
	if err != nil {
		return err
	}
	if added {
		f.announced.Add(1)
	}
	f.advance(r.Seq)
	return nil
}

// take adds row seq to the catalog, however it came (f.mu held): a seq
// past the cursor is marked read, this agent's own rows only that, and
// each row new to the catalog is passed to onRow. On an error the seq is
// unmarked, to be read again after the reconnect.
func (f *follower) take(seq int64, agent string, life int, id string, row []byte, files []fileEntry) (added bool, err error) {
	if seq > f.safe {
		f.have[seq] = true
	}
	if agent == f.self {
		return false, nil
	}
	if added, err = f.cat.add(agent, life, id, row, files); err != nil {
		delete(f.have, seq)
		return false, fmt.Errorf("follow: %w", err)
	}
	if added && f.onRow != nil {
		f.onRow(agent, life, id)
	}
	return added, nil
}

// advance moves safe over read seqs and over holes older than gapWait.
func (f *follower) advance(maxSeq int64) {
	f.top = max(f.top, maxSeq)
	maxSeq = f.top
	now := time.Now()
	for s := f.safe + 1; s <= maxSeq; s++ {
		if f.have[s] {
			delete(f.have, s)
			delete(f.gaps, s)
			f.safe = s
			continue
		}
		first, ok := f.gaps[s]
		if !ok {
			f.gaps[s] = now
			return
		}
		if now.Sub(first) < gapWait {
			return
		}
		delete(f.gaps, s)
		f.safe = s
	}
}

// reconcile reloads every agent's life whose row count differs from the
// database's.
func (f *follower) reconcile(ctx context.Context) error {
	rows, err := f.db.Query(ctx, `SELECT agent, life, count(*) FROM mfm_episodes WHERE agent <> $1 GROUP BY 1, 2`, f.self)
	if err != nil {
		return fmt.Errorf("follow: reconcile: %w", err)
	}
	type al struct {
		agent string
		life  int
	}
	var stale []al
	for rows.Next() {
		var a al
		var n int
		if err := rows.Scan(&a.agent, &a.life, &n); err != nil {
			rows.Close()
			return fmt.Errorf("follow: reconcile: %w", err)
		}
		if f.cat.count(a.agent, a.life) != n {
			stale = append(stale, a)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("follow: reconcile: %w", err)
	}
	for _, a := range stale {
		r, err := f.db.Query(ctx, `SELECT id, row, files FROM mfm_episodes WHERE agent = $1 AND life = $2`, a.agent, a.life)
		if err != nil {
			return fmt.Errorf("follow: reconcile: %w", err)
		}
		for r.Next() {
			var id, row string
			var files []byte
			if err := r.Scan(&id, &row, &files); err != nil {
				r.Close()
				return fmt.Errorf("follow: reconcile: %w", err)
			}
			var fl []fileEntry
			if json.Unmarshal(files, &fl) != nil {
				continue
			}
			added, err := f.cat.add(a.agent, a.life, id, []byte(row), fl)
			if err != nil {
				r.Close()
				return fmt.Errorf("follow: reconcile: %w", err)
			}
			if added {
				f.log.Info("fleet: row found by reconcile", "agent", a.agent, "life", a.life, "id", id)
				if f.onRow != nil {
					f.onRow(a.agent, a.life, id)
				}
			}
		}
		r.Close()
	}
	return nil
}
