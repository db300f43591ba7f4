package fleet

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
)

// stepsRange is a row's steps as a range for the GiST index that answers
// steps: (least and greatest: a row whose steps are reversed still gets a
// range, which a plain int8range would refuse, failing the insert).
const stepsRange = `int8range(least(first_step, last_step), greatest(first_step, last_step), '[]')`

// notifyChannel is the LISTEN/NOTIFY channel a shipped episode is
// announced on (payload: its seq).
const notifyChannel = "mfm_shipped"

// schema is the shared database: one row per shipped episode (each agent
// writes only its own rows, so agents never conflict), grid rows by their
// byte offset in the agent's grid.jsonl, and the agents' shared notes.
// words holds the row's query tokens (query.Tokens of its text fields) so
// free words are answered by a GIN index with the same tokenizer as the
// local index.
var schema = []string{
	// btree_gist (a trusted extension shipped with PostgreSQL) lets a GiST
	// index hold at beside a range and be read newest first by at's
	// distance from the far future: a steps: or near: query's newest
	// matches without walking past the newer rows outside its range.
	`CREATE EXTENSION IF NOT EXISTS btree_gist`,
	`CREATE TABLE IF NOT EXISTS mfm_episodes (
		agent text NOT NULL,
		life int NOT NULL,
		id text NOT NULL,
		seq bigserial NOT NULL,
		num bigint NOT NULL,
		at timestamptz NOT NULL,
		first_step bigint NOT NULL,
		last_step bigint NOT NULL,
		action_kind text,
		tags text[] NOT NULL,
		words text[] NOT NULL,
		x double precision NOT NULL,
		y double precision NOT NULL,
		z double precision NOT NULL,
		row text NOT NULL,
		files jsonb NOT NULL,
		shipped timestamptz NOT NULL DEFAULT now(),
		PRIMARY KEY (agent, life, id))`,
	`CREATE UNIQUE INDEX IF NOT EXISTS mfm_episodes_seq ON mfm_episodes (seq)`,
	`CREATE INDEX IF NOT EXISTS mfm_episodes_at ON mfm_episodes (at)`,
	`CREATE INDEX IF NOT EXISTS mfm_episodes_tags ON mfm_episodes USING gin (tags) WITH (fastupdate = off)`,
	`CREATE INDEX IF NOT EXISTS mfm_episodes_words ON mfm_episodes USING gin (words) WITH (fastupdate = off)`,
	`CREATE INDEX IF NOT EXISTS mfm_episodes_xz_at ON mfm_episodes USING gist (x, z, at)`,
	`CREATE INDEX IF NOT EXISTS mfm_episodes_steps_at ON mfm_episodes USING gist (` + stepsRange + `, at)`,
	`DROP INDEX IF EXISTS mfm_episodes_xz, mfm_episodes_steps`, // what the two above replace
	`CREATE TABLE IF NOT EXISTS mfm_grid (
		agent text NOT NULL,
		life int NOT NULL,
		off bigint NOT NULL,
		row text NOT NULL,
		PRIMARY KEY (agent, life, off))`,
	`CREATE TABLE IF NOT EXISTS mfm_notes (
		agent text NOT NULL,
		path text NOT NULL,
		body bytea NOT NULL,
		updated timestamptz NOT NULL DEFAULT now(),
		PRIMARY KEY (agent, path))`,
}

// ensureSchema creates the tables and indexes if they are missing; an
// advisory lock keeps agents starting together from racing on the DDL.
func ensureSchema(ctx context.Context, pool *pgxpool.Pool) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("create schema: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(73310023)`); err != nil {
		return fmt.Errorf("create schema: lock: %w", err)
	}
	defer conn.Exec(context.Background(), `SELECT pg_advisory_unlock(73310023)`)
	for _, s := range schema {
		if _, err := conn.Exec(ctx, s); err != nil {
			if strings.Contains(s, "btree_gist") {
				return fmt.Errorf("create schema: the btree_gist extension (PostgreSQL's contrib modules; Debian's postgresql-15 has them) is needed, and creating it needs the database's owner: %w", err)
			}
			return fmt.Errorf("create schema: %w", err)
		}
	}
	return nil
}
