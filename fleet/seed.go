package fleet

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mfm-project/mfm/episodes"
)

// CreateSchema creates the shared tables in the database at url if they
// are missing (a node does this itself when it first connects).
func CreateSchema(ctx context.Context, url string) error {
	pool, err := newPool(ctx, url)
	if err != nil {
		return err
	}
	defer pool.Close()
	return ensureSchema(ctx, pool)
}

// SeedRows bulk-loads index rows of agent's life into the shared database
// with COPY, as rows without files (their episode directories are empty):
// a benchmark's history, or a store's rows imported without its frames.
// Rows already present make the COPY fail; seed a fresh agent name. It
// ends with ANALYZE.
func SeedRows(ctx context.Context, url, agent string, life int, rows [][]byte) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("seed rows: %w", err)
	}
	defer conn.Close(ctx)
	src := make([][]any, 0, len(rows))
	for _, raw := range rows {
		r, err := episodes.ParseRow(raw)
		if err != nil {
			return fmt.Errorf("seed rows: %w", err)
		}
		at, err := time.Parse(time.RFC3339Nano, r.Time)
		if err != nil {
			at = time.Now().UTC()
		}
		num, _ := episodes.ParseEpisodeID(r.ID)
		src = append(src, []any{agent, life, r.ID, num, at, r.FirstStep, r.LastStep, r.ActionKind, nonNil(r.Tags), rowWords(&r), r.X, r.Y, r.Z, string(r.Raw), "[]"})
	}
	_, err = conn.CopyFrom(ctx, pgx.Identifier{"mfm_episodes"},
		[]string{"agent", "life", "id", "num", "at", "first_step", "last_step", "action_kind", "tags", "words", "x", "y", "z", "row", "files"},
		pgx.CopyFromRows(src))
	if err != nil {
		return fmt.Errorf("seed rows of %s: %w", agent, err)
	}
	// Fresh statistics, as after any bulk load: without them the planner
	// does not know the new rows and picks slow plans until autovacuum runs.
	if _, err := conn.Exec(ctx, `ANALYZE mfm_episodes`); err != nil {
		return fmt.Errorf("seed rows of %s: analyze: %w", agent, err)
	}
	return nil
}
