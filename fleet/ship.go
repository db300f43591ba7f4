package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/index/query"
	"github.com/mfm-project/mfm/internal/filestamp"
)

// fileEntry is one file of a shipped episode, as listed in its row's files.
type fileEntry struct {
	Path string `json:"p"` // slash path relative to the episode directory
	Size int64  `json:"n"`
}

// watermark is how far the local store has been shipped, per life: the
// byte offsets in index.jsonl and grid.jsonl past the last shipped row. It
// is kept in .mfm/fleet/shipped.json and written after each episode, so a
// daemon killed mid-ship ships at most one episode again (which the
// database ignores: its key is taken).
type watermark struct {
	Agent string               `json:"agent"`
	Lives map[string]*lifeMark `json:"lives"`
}

type lifeMark struct {
	Index int64 `json:"index"`
	Grid  int64 `json:"grid"`
}

// shipper copies each completed episode of the local store to the shared
// stores: files to the object store first, then its index row (and the
// grid rows before it) to PostgreSQL, then the watermark. It never writes
// the local store's record.
type shipper struct {
	store     *episodes.Store
	agent     string
	db        *pgxpool.Pool
	obj       *objects
	poll      time.Duration
	log       *slog.Logger
	markPath  string
	mark      watermark
	shareMine bool
	notes     map[string]filestamp.Stamp // mine/ files as last shipped
	mineAt    time.Time                  // when mine/ was last compared

	mu      sync.Mutex
	lastErr error
	shipped int64 // episodes inserted by this process
	// onShipped, when set, is called after each episode's row is committed.
	onShipped func(life int, id string)
	// beforeEpisode, when set (tests), runs before an episode's files are
	// read.
	beforeEpisode func(life int, id string)
	// before runs at the start of each cycle (creates the schema).
	before func(context.Context) error
}

func newShipper(store *episodes.Store, agent string, db *pgxpool.Pool, obj *objects, poll time.Duration, shareMine bool, log *slog.Logger) (*shipper, error) {
	p, err := store.MetaPath("fleet")
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(p, 0o755); err != nil {
		return nil, fmt.Errorf("shipper: %w", err)
	}
	s := &shipper{store: store, agent: agent, db: db, obj: obj, poll: poll, log: log,
		markPath: filepath.Join(p, "shipped.json"), shareMine: shareMine, notes: map[string]filestamp.Stamp{}}
	b, err := os.ReadFile(s.markPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		s.mark = watermark{Agent: agent, Lives: map[string]*lifeMark{}}
	case err != nil:
		return nil, fmt.Errorf("shipper: read watermark: %w", err)
	default:
		if err := json.Unmarshal(b, &s.mark); err != nil {
			return nil, fmt.Errorf("shipper: watermark %s is corrupt (delete it to ship everything again; the database keeps each episode once): %w", s.markPath, err)
		}
		if s.mark.Agent != agent {
			return nil, fmt.Errorf("shipper: %s was shipped as agent %q, not %q (one store is one agent)", store.Root, s.mark.Agent, agent)
		}
		if s.mark.Lives == nil {
			s.mark.Lives = map[string]*lifeMark{}
		}
	}
	return s, nil
}

// run ships until ctx ends. Errors (a store down) are retried with backoff
// from the same episode; nothing is skipped. A write to the store's
// index.jsonl (an episode's commit point) starts a cycle at once; the poll
// is the backstop (and the only trigger where inotify is not had).
func (s *shipper) run(ctx context.Context) {
	wake := s.watchIndex(ctx)
	var backoff time.Duration
	for {
		err := s.cycle(ctx)
		if ctx.Err() != nil {
			return
		}
		s.mu.Lock()
		was := s.lastErr
		s.lastErr = err
		s.mu.Unlock()
		wait := s.poll
		if err != nil {
			if was == nil {
				s.log.Warn("fleet: shipping paused, will retry", "agent", s.agent, "err", err)
			}
			backoff = min(max(2*backoff, 50*time.Millisecond), 2*time.Second)
			wait = backoff
		} else {
			if was != nil {
				s.log.Info("fleet: shipping resumed", "agent", s.agent)
			}
			backoff = 0
		}
		timer := time.NewTimer(wait)
		if err != nil {
			select { // a store is down: wait out the backoff
			case <-ctx.Done():
			case <-timer.C:
			}
		} else {
			select {
			case <-ctx.Done():
			case <-timer.C:
			case <-wake:
			}
		}
		timer.Stop()
		if ctx.Err() != nil {
			return
		}
	}
}

// watchIndex returns a channel that receives when index.jsonl in the
// store root is written or created; nil (never ready) when the store
// cannot be watched. The watch ends with ctx.
func (s *shipper) watchIndex(ctx context.Context) <-chan struct{} {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		s.log.Debug("fleet: no inotify, shipping by polling", "err", err)
		return nil
	}
	if err := w.Add(s.store.Root); err != nil {
		w.Close()
		s.log.Debug("fleet: store not watched, shipping by polling", "err", err)
		return nil
	}
	wake := make(chan struct{}, 1)
	go func() {
		defer w.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if filepath.Base(ev.Name) == episodes.IndexFileName && ev.Op&(fsnotify.Write|fsnotify.Create) != 0 {
					select {
					case wake <- struct{}{}:
					default:
					}
				}
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
			}
		}
	}()
	return wake
}

// cycle ships everything complete in the local store past the watermark.
func (s *shipper) cycle(ctx context.Context) error {
	if s.before != nil {
		if err := s.before(ctx); err != nil {
			return err
		}
	}
	lives, err := s.store.Lives()
	if err != nil {
		return fmt.Errorf("ship: %w", err)
	}
	for _, l := range lives {
		if err := s.shipLife(ctx, l); err != nil {
			return err
		}
	}
	if s.shareMine && time.Since(s.mineAt) >= mineEvery {
		if err := s.shipMine(ctx); err != nil {
			return err
		}
		s.mineAt = time.Now()
	}
	return nil
}

func (s *shipper) lifeMark(n int) *lifeMark {
	k := strconv.Itoa(n)
	m := s.mark.Lives[k]
	if m == nil {
		m = &lifeMark{}
		s.mark.Lives[k] = m
	}
	return m
}

func (s *shipper) saveMark() error {
	b, err := json.Marshal(s.mark)
	if err != nil {
		return err
	}
	return episodes.WriteFileAtomic(s.markPath, b, 0o644)
}

func (s *shipper) shipLife(ctx context.Context, l episodes.Life) error {
	m := s.lifeMark(l.N)
	if st, err := os.Stat(l.IndexPath()); err != nil || st.Size() <= m.Index {
		if st, err := os.Stat(l.GridPath()); err != nil || st.Size() <= m.Grid {
			return nil
		}
	}
	_, err := episodes.ScanFile(l.IndexPath(), m.Index, func(line episodes.Line) error {
		end := line.Offset + int64(len(line.Data)) + 1
		if len(line.Data) > 0 {
			row, perr := episodes.ParseRow(line.Data)
			if perr == nil && rowLife(row.Raw) > 0 && rowLife(row.Raw) != l.N {
				// The life changed under this scan (NewLife moved it to
				// previous/): the next cycle reads it from there.
				return errLifeMoved
			}
			if perr != nil {
				s.log.Warn("fleet: malformed index row not shipped", "file", l.IndexPath(), "offset", line.Offset, "err", perr)
			} else if err := s.shipEpisode(ctx, l, row, m); err != nil {
				return err
			}
		}
		m.Index = end
		return s.saveMark()
	})
	if errors.Is(err, errLifeMoved) {
		return nil
	}
	if err != nil {
		return err
	}
	// Grid rows written outside an episode.
	before := m.Grid
	if err := s.shipGrid(ctx, l, m); err != nil {
		return err
	}
	if m.Grid != before {
		return s.saveMark()
	}
	return nil
}

// gridRow is a grid.jsonl line and its offset (its key in mfm_grid).
type gridRow struct {
	off int64
	row string
}

// gridRows reads the complete grid rows of l from offset from; end is the
// offset past them.
func gridRows(l episodes.Life, from int64) (rows []gridRow, end int64, err error) {
	// Blank lines are shipped too: the other mounts' copies take rows only
	// where the previous one ended, so a skipped line would hold back
	// every row after it.
	end, err = episodes.ScanFile(l.GridPath(), from, func(line episodes.Line) error {
		rows = append(rows, gridRow{line.Offset, string(line.Data)})
		return nil
	})
	if err != nil {
		return nil, from, fmt.Errorf("ship grid: %w", err)
	}
	return rows, end, nil
}

// queueGrid adds the inserts of rows to b (a row already there is kept).
func (s *shipper) queueGrid(b *pgx.Batch, life int, rows []gridRow) {
	for _, g := range rows {
		b.Queue(`INSERT INTO mfm_grid (agent, life, off, row) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`, s.agent, life, g.off, g.row)
	}
}

// shipGrid ships the grid rows past the watermark written outside an
// episode, in one transaction.
func (s *shipper) shipGrid(ctx context.Context, l episodes.Life, m *lifeMark) error {
	rows, end, err := gridRows(l, m.Grid)
	if err != nil {
		return err
	}
	if len(rows) > 0 {
		b := &pgx.Batch{}
		s.queueGrid(b, l.N, rows)
		if err := pgx.BeginFunc(ctx, s.db, func(tx pgx.Tx) error { return tx.SendBatch(ctx, b).Close() }); err != nil {
			return fmt.Errorf("ship grid rows of %s life %d: %w", s.agent, l.N, err)
		}
	}
	m.Grid = end
	return nil
}

// putConcurrency is how many files of one episode are PUT at once.
const putConcurrency = 4

// putFiles PUTs the files of an episode directory, a few at a time, and
// returns their list.
func (s *shipper) putFiles(ctx context.Context, l episodes.Life, id, dir string) ([]fileEntry, error) {
	var rels []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			rels = append(rels, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	files := make([]fileEntry, len(rels))
	errs := make([]error, len(rels))
	sem := make(chan struct{}, putConcurrency)
	var wg sync.WaitGroup
	for i, rel := range rels {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
			if err == nil {
				err = s.obj.put(ctx, s.obj.key(s.agent, l.N, id, rel), data)
			}
			files[i], errs[i] = fileEntry{Path: rel, Size: int64(len(data))}, err
		}()
	}
	wg.Wait()
	return files, errors.Join(errs...)
}

// shipEpisode puts the episode's files, then inserts its row (ignored when
// the row is there already) and announces it in the same transaction.
func (s *shipper) shipEpisode(ctx context.Context, l episodes.Life, row episodes.Row, m *lifeMark) error {
	if s.beforeEpisode != nil {
		s.beforeEpisode(l.N, row.ID)
	}
	files, err := s.putFiles(ctx, l, row.ID, l.EpisodeDir(row.ID))
	if errors.Is(err, fs.ErrNotExist) {
		if cur, cerr := s.store.CurrentLife(); l.Current && (cerr != nil || cur.N != l.N) {
			return errLifeMoved // moved to previous/ while read: ship it from there
		}
		if len(files) > 0 {
			return fmt.Errorf("ship episode %s: a file vanished while shipping: %w", row.ID, err)
		}
		s.log.Warn("fleet: episode without a directory shipped as a row only", "life", l.N, "id", row.ID)
		err = nil
	}
	if err != nil {
		return fmt.Errorf("ship episode %s: %w", row.ID, err)
	}
	// The grid rows written before this episode's row go in its transaction.
	grid, gridEnd, err := gridRows(l, m.Grid)
	if err != nil {
		return err
	}
	// The current life's files are read by their paths in the store root:
	// had NewLife moved the life to previous/ meanwhile, those paths could
	// be the next life's episode and grid. The next cycle ships it from
	// previous/ (PUTting its own files over what went up here).
	if l.Current {
		if cur, cerr := s.store.CurrentLife(); cerr != nil || cur.N != l.N {
			return errLifeMoved
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	fj, _ := json.Marshal(files)
	if files == nil {
		fj = []byte("[]")
	}
	at := time.Now().UTC()
	if t, err := time.Parse(time.RFC3339Nano, row.Time); err == nil {
		at = t
	}
	num, _ := episodes.ParseEpisodeID(row.ID)
	inserted := false
	err = pgx.BeginFunc(ctx, s.db, func(tx pgx.Tx) error {
		var seq int64
		err := tx.QueryRow(ctx, `INSERT INTO mfm_episodes
			(agent, life, id, num, at, first_step, last_step, action_kind, tags, words, x, y, z, row, files)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
			ON CONFLICT (agent, life, id) DO NOTHING RETURNING seq`,
			s.agent, l.N, row.ID, num, at, row.FirstStep, row.LastStep, row.ActionKind, nonNil(row.Tags), rowWords(&row),
			row.X, row.Y, row.Z, string(row.Raw), string(fj)).Scan(&seq)
		if errors.Is(err, pgx.ErrNoRows) {
			// Shipped before (a restart after the insert); its grid rows
			// were in that transaction, or go now.
			b := &pgx.Batch{}
			s.queueGrid(b, l.N, grid)
			return tx.SendBatch(ctx, b).Close()
		}
		if err != nil {
			return err
		}
		inserted = true
		b := &pgx.Batch{}
		b.Queue(`SELECT pg_notify($1, $2)`, notifyChannel, announcement(seq, s.agent, l.N, row.ID, row.Raw, fj))
		s.queueGrid(b, l.N, grid)
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return fmt.Errorf("ship episode %s of %s life %d: %w", row.ID, s.agent, l.N, err)
	}
	m.Grid = gridEnd
	if inserted {
		s.mu.Lock()
		s.shipped++
		s.mu.Unlock()
	}
	if s.onShipped != nil {
		s.onShipped(l.N, row.ID)
	}
	return nil
}

var errLifeMoved = errors.New("life moved")

// rowLife is the row's "life" field (0 when absent, as in paper rows).
func rowLife(raw []byte) int {
	var v struct {
		Life int `json:"life"`
	}
	json.Unmarshal(raw, &v)
	return v.Life
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// rowWords are the distinct query tokens of a row's text fields: what a
// free word of a query must be among (query.Match then checks phrases).
func rowWords(r *episodes.Row) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, f := range query.TextFields(r) {
		for _, t := range query.Tokens(f) {
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	return out
}

// mineEvery is how often mine/ is compared with what was shared.
const mineEvery = 500 * time.Millisecond

// maxNoteSize is the largest mine/ file shared; larger ones are skipped.
const maxNoteSize = 1 << 20

// shipMine mirrors the agent's mine/ files into mfm_notes: changed files
// are upserted, removed ones deleted, in one transaction that announces
// the change on notesChannel (payload: the agent) when a row changed, so
// the other agents' caches of these notes drop them.
func (s *shipper) shipMine(ctx context.Context) error {
	root := s.store.Path("mine")
	now := map[string]filestamp.Stamp{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil || info.Size() > maxNoteSize {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		now[filepath.ToSlash(rel)] = filestamp.Of(info)
		return nil
	})
	if err != nil {
		return fmt.Errorf("share mine/: %w", err)
	}
	b := &pgx.Batch{}
	shipped := map[string]filestamp.Stamp{}
	var removed []string
	for rel, st := range now {
		if old, ok := s.notes[rel]; ok && old == st {
			continue
		}
		body, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			continue // removed or unreadable since the walk: next cycle
		}
		b.Queue(`INSERT INTO mfm_notes (agent, path, body) VALUES ($1, $2, $3)
			ON CONFLICT (agent, path) DO UPDATE SET body = EXCLUDED.body, updated = now()
			WHERE mfm_notes.body IS DISTINCT FROM EXCLUDED.body`, s.agent, rel, body)
		shipped[rel] = st
	}
	for rel := range s.notes {
		if _, ok := now[rel]; !ok {
			b.Queue(`DELETE FROM mfm_notes WHERE agent = $1 AND path = $2`, s.agent, rel)
			removed = append(removed, rel)
		}
	}
	if b.Len() == 0 {
		return nil
	}
	err = pgx.BeginFunc(ctx, s.db, func(tx pgx.Tx) error {
		n := b.Len()
		br := tx.SendBatch(ctx, b)
		changed := false
		for range n {
			tag, err := br.Exec()
			if err != nil {
				br.Close()
				return err
			}
			changed = changed || tag.RowsAffected() > 0
		}
		if err := br.Close(); err != nil {
			return err
		}
		if !changed {
			return nil
		}
		_, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, notesChannel, s.agent)
		return err
	})
	if err != nil {
		return fmt.Errorf("share mine/ of %s: %w", s.agent, err)
	}
	for rel, st := range shipped {
		s.notes[rel] = st
	}
	for _, rel := range removed {
		delete(s.notes, rel)
	}
	return nil
}

// status is the last shipping error (nil when healthy) and the number of
// episodes this process inserted.
func (s *shipper) status() (shipped int64, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shipped, s.lastErr
}
