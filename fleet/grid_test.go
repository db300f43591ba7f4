package fleet

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mfm-project/mfm/fleet/fleettest"
)

// TestGridCopy: an agent's grid.jsonl under agents/ is a local copy kept
// up to date with the rows past its end: a read asks only for those, a
// row committed after a later one (a gap) holds the later one back until
// it arrives, so rows are never skipped, duplicated or out of order; the
// copy on disk is what is served, and it is served when the database does
// not answer (logged once), with an error only while nothing was ever
// fetched.
func TestGridCopy(t *testing.T) {
	ctx := context.Background()
	url := fleettest.PostgresURL(t)
	db, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	if err := ensureSchema(ctx, db); err != nil {
		t.Fatal(err)
	}
	down, err := newPool(ctx, "postgres://mfm@127.0.0.1:1/nodb")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(down.Close)
	var logs bytes.Buffer
	dir := filepath.Join(t.TempDir(), "grid")
	c, err := newGridCopies(dir, db, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.close)

	// rows of 9 bytes and '\n': row k is at offset 10k
	row := func(k int) string { return fmt.Sprintf(`{"k":%03d}`, k) }
	want := func(ks ...int) string {
		var b strings.Builder
		for _, k := range ks {
			b.WriteString(row(k) + "\n")
		}
		return b.String()
	}
	ins := func(k int) {
		t.Helper()
		if _, err := db.Exec(ctx, `INSERT INTO mfm_grid (agent, life, off, row) VALUES ('alice', 1, $1, $2)`, int64(10*k), row(k)); err != nil {
			t.Fatal(err)
		}
	}
	g := c.copyOf("alice", 1)
	read := func(step, want string, rows int64) {
		t.Helper()
		before := g.rowsRead
		b, err := c.read(ctx, "alice", 1)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if string(b) != want {
			t.Fatalf("%s: grid.jsonl =\n%s\nwant\n%s", step, b, want)
		}
		if disk, _ := os.ReadFile(g.path); string(disk) != want {
			t.Fatalf("%s: the copy on disk =\n%s\nwant\n%s", step, disk, want)
		}
		if got := g.rowsRead - before; got != rows {
			t.Fatalf("%s: %d rows read from the database, want %d", step, got, rows)
		}
	}

	c.db = down
	if _, err := c.read(ctx, "alice", 1); err == nil {
		t.Fatal("read with nothing held and the database down: no error")
	}
	c.db = db
	read("empty grid", "", 0)
	ins(0)
	ins(1)
	read("two rows", want(0, 1), 2)
	read("nothing new", want(0, 1), 0)

	// Row 2 is inserted but not committed when row 3 commits: 3 is past a
	// gap and is held back.
	tx, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `INSERT INTO mfm_grid (agent, life, off, row) VALUES ('alice', 1, 20, $1)`, row(2)); err != nil {
		t.Fatal(err)
	}
	ins(3)
	read("row 3 past the gap at row 2", want(0, 1), 1)
	read("the gap again (one row asked for)", want(0, 1), 1)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	ins(4)
	read("the gap filled", want(0, 1, 2, 3, 4), 3)

	// The database down: the copy is served, and that is logged once.
	logs.Reset()
	c.db = down
	read("database down", want(0, 1, 2, 3, 4), 0)
	read("database still down", want(0, 1, 2, 3, 4), 0)
	if n := strings.Count(logs.String(), "did not answer"); n != 1 {
		t.Errorf("the database being down logged %d times, want once:\n%s", n, logs.String())
	}
	c.db = db
	ins(5)
	read("database back", want(0, 1, 2, 3, 4, 5), 1)
	if !strings.Contains(logs.String(), "answers again") {
		t.Errorf("the database answering again not logged:\n%s", logs.String())
	}

	// Readers at once while rows arrive: each sees a prefix of the rows,
	// none twice, and the last read sees them all.
	all := []int{0, 1, 2, 3, 4, 5}
	done := make(chan error)
	go func() {
		defer close(done)
		for k := 6; k < 60; k++ {
			if _, err := db.Exec(ctx, `INSERT INTO mfm_grid (agent, life, off, row) VALUES ('alice', 1, $1, $2)`, int64(10*k), row(k)); err != nil {
				done <- err
				return
			}
		}
	}()
	for k := 6; k < 60; k++ {
		all = append(all, k)
	}
	full := want(all...)
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 30 {
				b, err := c.read(ctx, "alice", 1)
				if err != nil || !strings.HasPrefix(full, string(b)) || len(b)%10 != 0 {
					errs <- fmt.Sprintf("a concurrent read: %d bytes, err %v, not a prefix of the rows", len(b), err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if b, err := c.read(ctx, "alice", 1); err != nil || string(b) != full {
		t.Fatalf("after the concurrent reads: %d bytes, %v; want all %d rows once", len(b), err, len(all))
	}

	// Another life is another copy.
	if _, err := db.Exec(ctx, `INSERT INTO mfm_grid (agent, life, off, row) VALUES ('alice', 2, 0, $1)`, row(9)); err != nil {
		t.Fatal(err)
	}
	if b, err := c.read(ctx, "alice", 2); err != nil || string(b) != want(9) {
		t.Fatalf("life 2: %q, %v", b, err)
	}
}

// TestGridWhileDatabaseDown: with PostgreSQL stopped, another agent's
// grid.jsonl (and a map of it) is served as held rather than failing, and
// once the database is back the rows shipped since arrive.
func TestGridWhileDatabaseDown(t *testing.T) {
	pg, url := ownPostgres(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tm := &team{t: t, pg: url, s3: fleettest.S3(t)}
	alice, bob := tm.agent("alice", false), tm.agent("bob", false)
	alice.record(t, 3)
	waitFor(t, 20*time.Second, "bob to see alice's episodes", func() bool { return bob.node.cat.count("alice", 1) == 3 })
	tree := bob.node.Tree()
	grid := func() ([]byte, error) { b, _, err := tree.Open(ctx, "alice/grid.jsonl"); return b, err }
	held := readLocal(t, alice.store, "grid.jsonl")
	if b, err := grid(); err != nil || !bytes.Equal(b, held) {
		t.Fatalf("agents/alice/grid.jsonl: %q, %v; want alice's %q", b, err, held)
	}
	if err := pg.Stop(); err != nil {
		t.Fatal(err)
	}
	if b, err := grid(); err != nil || !bytes.Equal(b, held) {
		t.Fatalf("agents/alice/grid.jsonl with the database down: %q, %v; want the %d bytes held", b, err, len(held))
	}
	alice.record(t, 2) // recorded and queued while the database is down
	if err := pg.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "alice's new grid rows in bob's grid.jsonl", func() bool {
		b, err := grid()
		return err == nil && bytes.Equal(b, readLocal(t, alice.store, "grid.jsonl"))
	})
}

// BenchmarkAgentGrid reads another agent's grid.jsonl of 100,000 rows of
// 100 bytes with nothing new since the last read: from the local copy
// (one query for the rows past its end, then the file) and, as it was
// read before the copy, every row from PostgreSQL.
func BenchmarkAgentGrid(b *testing.B) {
	ctx := context.Background()
	db, err := pgxpool.New(ctx, fleettest.PostgresURL(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(db.Close)
	if err := ensureSchema(ctx, db); err != nil {
		b.Fatal(err)
	}
	const rows = 100000
	if _, err := db.Exec(ctx, `INSERT INTO mfm_grid (agent, life, off, row)
		SELECT 'alice', 1, g * 100, repeat('x', 99) FROM generate_series(0, $1 - 1) g`, rows); err != nil {
		b.Fatal(err)
	}
	c, err := newGridCopies(filepath.Join(b.TempDir(), "grid"), db, slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.close)
	check := func(n int) {
		if n != rows*100 {
			b.Fatalf("read %d bytes, want %d", n, rows*100)
		}
	}
	if g, err := c.read(ctx, "alice", 1); err != nil { // the copy filled once
		b.Fatal(err)
	} else {
		check(len(g))
	}
	b.Run("copy", func(b *testing.B) {
		for range b.N {
			g, err := c.read(ctx, "alice", 1)
			if err != nil {
				b.Fatal(err)
			}
			check(len(g))
		}
	})
	b.Run("whole", func(b *testing.B) {
		for range b.N {
			r, err := db.Query(ctx, `SELECT row FROM mfm_grid WHERE agent = $1 AND life = $2 ORDER BY off`, "alice", 1)
			if err != nil {
				b.Fatal(err)
			}
			var g bytes.Buffer
			for r.Next() {
				var s string
				if err := r.Scan(&s); err != nil {
					b.Fatal(err)
				}
				g.WriteString(s)
				g.WriteByte('\n')
			}
			if err := r.Err(); err != nil {
				b.Fatal(err)
			}
			check(g.Len())
		}
	})
}
