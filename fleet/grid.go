package fleet

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mfm-project/mfm/episodes"
)

// gridAnswer is how long the shared database has to start answering a
// read of grid rows; past it the rows held are served. Once it answers,
// the rows are read to the end.
const gridAnswer = 2 * time.Second

// gridBatch is how many grid rows one query reads.
const gridBatch = 10000

// gridCopies keeps a local copy of each other agent's grid.jsonl, one file
// per agent and life under dir (store/.mfm/fleet/grid/), and brings it up
// to date from PostgreSQL on each read with the rows past what it holds.
// Grid rows never change once shipped and are keyed by their byte offset
// in the agent's grid.jsonl, so a copy is always a prefix of the agent's
// file: a row is appended only when its offset is the end of the copy.
// A row at a larger offset (the rows before it not committed yet, or not
// visible) is a gap: the copy stops before it and the next read asks
// again from the same offset, so rows are never skipped, duplicated or
// out of order. When the database does not answer, the rows held are
// served (and that is logged once, until it answers again).
//
// The copies are files rather than entries of the file cache because they
// grow by appending and must not be evicted (an evicted copy would be read
// whole again, and could not be served while the database is down). Like
// the catalog's index files they are emptied at start and filled again
// from the database.
type gridCopies struct {
	dir string
	db  *pgxpool.Pool
	log *slog.Logger

	mu    sync.Mutex
	lives map[string]*gridCopy // "agent/life_N"
	down  *outage              // fetches failing (logged once)
}

// gridCopy is one agent's life's grid.jsonl as held.
type gridCopy struct {
	mu      sync.Mutex // one fetch at a time; held while size changes
	path    string
	f       *os.File // path, open for appending
	size    int64    // bytes held: the offset of the next row expected
	fetched bool     // a fetch has succeeded (an empty copy is the grid)
	// gapAt is the offset of a row seen past the end of the copy (0: no
	// gap), first seen at gapSince; logged once when it lasts gapWait.
	gapAt     int64
	gapSince  time.Time
	gapLogged bool
	rowsRead  int64 // rows read from the database (tests)
}

func newGridCopies(dir string, db *pgxpool.Pool, log *slog.Logger) (*gridCopies, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("fleet grid copies: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("fleet grid copies: %w", err)
	}
	return &gridCopies{dir: dir, db: db, log: log, lives: map[string]*gridCopy{},
		down: &outage{what: "other agents' grid.jsonl", log: log}}, nil
}

// close closes the copies' files.
func (c *gridCopies) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, g := range c.lives {
		g.mu.Lock()
		if g.f != nil {
			g.f.Close()
			g.f = nil
		}
		g.mu.Unlock()
	}
}

func (c *gridCopies) copyOf(agent string, life int) *gridCopy {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := lifeKey(agent, life)
	g := c.lives[k]
	if g == nil {
		g = &gridCopy{path: filepath.Join(c.dir, agent+"."+episodes.LifeName(life)+".jsonl")}
		c.lives[k] = g
	}
	return g
}

// size is the length of agent's life's copy: as held once it has been
// read, else brought up to date first, so the first ls -l shows the rows
// rather than an empty file (0 when that fails: the database is down).
func (c *gridCopies) size(ctx context.Context, agent string, life int) int64 {
	g := c.copyOf(agent, life)
	g.mu.Lock()
	fetched, size := g.fetched, g.size
	g.mu.Unlock()
	if fetched {
		return size
	}
	f, size, err := c.open(ctx, agent, life)
	if err != nil {
		return 0
	}
	f.Close()
	return size
}

// read brings agent's life's copy up to date and returns it (see open).
func (c *gridCopies) read(ctx context.Context, agent string, life int) ([]byte, error) {
	f, size, err := c.open(ctx, agent, life)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fmt.Errorf("agents/%s/grid.jsonl: local copy: %w", agent, err)
	}
	return b, nil
}

// open brings agent's life's copy up to date and returns it open for
// reading with the length of its whole rows. It fails only when nothing
// was ever fetched and the database does not answer, or the local file
// cannot be used.
func (c *gridCopies) open(ctx context.Context, agent string, life int) (*os.File, int64, error) {
	g := c.copyOf(agent, life)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.f == nil {
		f, err := os.OpenFile(g.path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			return nil, 0, fmt.Errorf("agents/%s/grid.jsonl: local copy: %w", agent, err)
		}
		g.f, g.size = f, 0
	}
	err := c.fetch(ctx, g, agent, life)
	c.down.report(err)
	if err == nil {
		g.fetched = true
	} else if !g.fetched {
		return nil, 0, fmt.Errorf("agents/%s/grid.jsonl: the shared database did not answer: %w", agent, err)
	}
	if g.gapAt > 0 && !g.gapLogged && time.Since(g.gapSince) >= gapWait {
		g.gapLogged = true
		c.log.Warn("fleet: another agent's grid rows past a missing one are held back until it arrives",
			"agent", agent, "life", life, "missing_at", g.size, "next_row_at", g.gapAt)
	}
	f, err := os.Open(g.path)
	if err != nil {
		return nil, 0, fmt.Errorf("agents/%s/grid.jsonl: local copy: %w", agent, err)
	}
	return f, g.size, nil
}

// fetch appends the rows past the end of g (g.mu held). With a gap
// outstanding it first asks for one row, so a hole that lasts costs one
// row a read rather than every row past it.
func (c *gridCopies) fetch(ctx context.Context, g *gridCopy, agent string, life int) error {
	limit := gridBatch
	if g.gapAt > 0 {
		limit = 1
	}
	for {
		n, gapAt, err := c.fetchBatch(ctx, g, agent, life, limit)
		if err != nil {
			return err
		}
		if gapAt > 0 {
			if gapAt != g.gapAt || g.gapSince.IsZero() {
				g.gapAt, g.gapSince, g.gapLogged = gapAt, time.Now(), false
			}
			return nil
		}
		g.gapAt, g.gapSince, g.gapLogged = 0, time.Time{}, false
		if n < limit {
			return nil
		}
		limit = gridBatch
	}
}

// fetchBatch reads up to limit rows from the end of g and appends those
// that follow it without a hole; gapAt is the offset of a row past a hole
// (0: none). The rows appended before an error stay (they are complete).
func (c *gridCopies) fetchBatch(ctx context.Context, g *gridCopy, agent string, life int, limit int) (n int, gapAt int64, err error) {
	qctx, cancel := context.WithCancel(ctx)
	defer cancel()
	answer := time.AfterFunc(gridAnswer, cancel)
	rows, err := c.db.Query(qctx, `SELECT off, row FROM mfm_grid WHERE agent = $1 AND life = $2 AND off >= $3 ORDER BY off LIMIT $4`,
		agent, life, g.size, limit)
	if err != nil {
		return 0, 0, err
	}
	answer.Stop() // answering: read to the end
	var buf bytes.Buffer
	for rows.Next() {
		var off int64
		var row string
		if err = rows.Scan(&off, &row); err != nil {
			break
		}
		n++
		g.rowsRead++
		if off != g.size+int64(buf.Len()) {
			gapAt = off
			break
		}
		buf.WriteString(row)
		buf.WriteByte('\n')
	}
	rows.Close()
	if err == nil {
		err = rows.Err()
	}
	if werr := g.append(buf.Bytes()); werr != nil {
		return n, 0, fmt.Errorf("agents/%s/grid.jsonl: local copy: %w", agent, werr)
	}
	return n, gapAt, err
}

// append writes complete rows to the end of the copy; a short write is
// cut off, so the copy stays a prefix of whole rows.
func (g *gridCopy) append(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if _, err := g.f.Write(b); err != nil {
		g.f.Truncate(g.size)
		g.f.Seek(g.size, io.SeekStart)
		return err
	}
	g.size += int64(len(b))
	return nil
}
