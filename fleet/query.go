package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/index/query"
)

// LocalQuerier answers cue queries over the agent's own store (the
// mount's Querier without sharing; fs.Querier has this shape).
type LocalQuerier interface {
	Query(ctx context.Context, q string) (rows [][]byte, dirs []string, err error)
	Grammar() string
}

// Querier answers cue queries on a shared mount: queries without agent:
// (or naming this agent) go to the local index; agent:NAME is answered by
// PostgreSQL over NAME's shipped rows and agent:all merges both, in
// chronological order. Shared matches link to agents/NAME/episodes/<id>.
type Querier struct {
	local LocalQuerier
	self  string
	db    *pgxpool.Pool
	cat   *catalog
}

// Grammar is the local grammar (which documents agent:).
func (q *Querier) Grammar() string { return q.local.Grammar() }

type hit struct {
	at  time.Time
	row []byte
	dir string
}

// Query runs s.
func (q *Querier) Query(ctx context.Context, s string) ([][]byte, []string, error) {
	pq, err := query.Parse(s)
	if err != nil {
		return nil, nil, err
	}
	if !pq.AllAgents && (pq.Agent == "" || pq.Agent == q.self) {
		return q.local.Query(ctx, s)
	}
	if pq.InMine {
		return nil, nil, &query.Error{Term: "in:mine", Msg: "in:mine is answered over this agent's own notes only; drop agent: or in:mine"}
	}
	if pq.Agent != "" && q.cat.currentLife(pq.Agent) == 0 {
		names := q.cat.agentNames()
		known := "none has shipped an episode yet"
		if len(names) > 0 {
			known = "agents: " + strings.Join(names, ", ")
		}
		return nil, nil, &query.Error{Term: "agent:" + pq.Agent, Msg: "no episode of this agent in the shared memory (" + known + ")"}
	}
	hits, err := q.shared(ctx, pq)
	if err != nil {
		return nil, nil, err
	}
	if pq.AllAgents {
		rows, dirs, err := q.local.Query(ctx, s)
		if err != nil {
			return nil, nil, err
		}
		for i, r := range rows {
			hits = append(hits, hit{at: rowTime(r), row: labelRow(r, q.self, dirs[i]), dir: dirs[i]})
		}
		sort.SliceStable(hits, func(i, j int) bool { return hits[i].at.Before(hits[j].at) })
		if pq.Last > 0 && len(hits) > pq.Last {
			hits = hits[len(hits)-pq.Last:]
		}
	}
	rows := make([][]byte, len(hits))
	dirs := make([]string, len(hits))
	for i, h := range hits {
		rows[i], dirs[i] = h.row, h.dir
	}
	return rows, dirs, nil
}

// labelRow puts "agent" and "episode_dir" (the episode's directory in
// this mount) first in a row of an agent: query, whose rows come from
// several agents with the same ids and paths relative to each agent's
// store. A row that is not a JSON object is left as it is.
func labelRow(row []byte, agent, dir string) []byte {
	rest := bytes.TrimLeft(row, " \t")
	if len(rest) == 0 || rest[0] != '{' {
		return row
	}
	rest = rest[1:]
	a, _ := json.Marshal(agent)
	d, _ := json.Marshal(dir)
	out := make([]byte, 0, len(row)+len(a)+len(d)+32)
	out = append(append(append(out, `{"agent": `...), a...), `, "episode_dir": `...)
	out = append(out, d...)
	if len(bytes.TrimSpace(rest)) > 0 && bytes.TrimSpace(rest)[0] != '}' {
		out = append(out, ", "...)
	}
	return append(out, rest...)
}

func rowTime(row []byte) time.Time {
	var v struct {
		Time string `json:"time"`
	}
	json.Unmarshal(row, &v)
	t, _ := time.Parse(time.RFC3339Nano, v.Time)
	return t
}

// shared answers pq over the other agents' rows in PostgreSQL: the SQL
// narrows by the indexed columns, query.Match decides each row exactly.
// Rows the follower has not delivered to agents/ yet are left out, so
// every match's link resolves.
func (q *Querier) shared(ctx context.Context, pq *query.Query) ([]hit, error) {
	var conds []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if pq.Agent != "" {
		conds = append(conds, "agent = "+arg(pq.Agent))
	} else {
		conds = append(conds, "agent <> "+arg(q.self))
	}
	switch {
	case pq.AllLives:
	case pq.Life > 0:
		conds = append(conds, "life = "+arg(pq.Life))
	default:
		var agents []string
		var lives []int32
		for _, a := range q.cat.agentNames() {
			agents = append(agents, a)
			lives = append(lives, int32(q.cat.currentLife(a)))
		}
		conds = append(conds, "(agent, life) IN (SELECT * FROM unnest("+arg(agents)+"::text[], "+arg(lives)+"::int[]))")
	}
	if len(pq.Tags) > 0 {
		conds = append(conds, "tags @> "+arg(pq.Tags)+"::text[]")
	}
	if len(pq.NotTags) > 0 {
		conds = append(conds, "NOT (tags && "+arg(pq.NotTags)+"::text[])")
	}
	if len(pq.Actions) > 0 {
		conds = append(conds, "action_kind = ANY("+arg(pq.Actions)+"::text[])")
	}
	ranges := rangeConds(pq, arg)
	conds = append(conds, ranges...)
	if y := pq.Y; y != nil {
		if !math.IsInf(y.Min, 0) {
			conds = append(conds, "y >= "+arg(y.Min))
		}
		if !math.IsInf(y.Max, 0) {
			conds = append(conds, "y <= "+arg(y.Max))
		}
	}
	if !pq.Since.IsZero() {
		conds = append(conds, "at >= "+arg(pq.Since))
	}
	if !pq.Until.IsZero() {
		conds = append(conds, "at <= "+arg(pq.Until))
	}
	var words []string
	for _, w := range pq.Words {
		words = append(words, w...)
	}
	if len(words) > 0 {
		conds = append(conds, "words @> "+arg(words)+"::text[]")
	}
	sql := "SELECT agent, life, id, row, at FROM mfm_episodes WHERE " + strings.Join(conds, " AND ")
	var hits []hit
	if pq.Last == 0 {
		if _, err := q.collect(ctx, sql+" ORDER BY at, agent, life, num", args, pq, &hits, 0); err != nil {
			return nil, err
		}
		return hits, nil
	}
	// Newest first, a page at a time, until Last rows pass the exact match.
	// The planner walks the at index backwards and filters, which is fast
	// when matches are spread over time; when a steps or near: range holds
	// few rows they are read by the range's index and sorted instead (a
	// range's matches can all be old: steps grow with time, and the walk
	// would pass every newer row first).
	page := max(pq.Last*2, 64)
	if len(ranges) > 0 {
		few, err := q.fewInRange(ctx, pq, page)
		if err != nil {
			return nil, err
		}
		if few {
			// OFFSET 0 keeps the subquery whole: the outer conditions
			// and the ORDER BY cannot reach into it and pick the walk.
			sql = strings.Replace(sql, "FROM mfm_episodes", "FROM (SELECT * FROM mfm_episodes WHERE "+strings.Join(ranges, " AND ")+" OFFSET 0) rng", 1)
		}
	}
	for off := 0; len(hits) < pq.Last; off += page {
		// LIMIT and OFFSET as parameters keep the statement text stable,
		// so the connection's prepared statement is reused.
		pargs := append(slices.Clip(args), page, off)
		scanned, err := q.collect(ctx, fmt.Sprintf("%s ORDER BY at DESC, agent DESC, life DESC, num DESC LIMIT $%d OFFSET $%d", sql, len(args)+1, len(args)+2), pargs, pq, &hits, pq.Last)
		if err != nil {
			return nil, err
		}
		if scanned < page {
			break
		}
	}
	for i, j := 0, len(hits)-1; i < j; i, j = i+1, j-1 {
		hits[i], hits[j] = hits[j], hits[i]
	}
	return hits, nil
}

// rangeScanMax is the planner's estimate of rows in a steps or near:
// range up to which a newest-first query reads the range by its index and
// sorts, instead of walking back over time (a variable for the tests).
var rangeScanMax = 20000.0

// rangeConds are pq's steps and near: conditions in the form their
// indexes answer (supersets: query.Match decides exactly): a row's steps
// as a range (GiST), its x and z (btree, whose column statistics give
// the planner true estimates of a box).
func rangeConds(pq *query.Query, arg func(any) string) []string {
	var out []string
	if st := pq.Steps; st != nil {
		out = append(out, stepsRange+" && int8range("+arg(st.A)+", "+arg(st.B)+", '[]')")
	}
	if n := pq.Near; n != nil {
		out = append(out, "x BETWEEN "+arg(n.X-n.R)+" AND "+arg(n.X+n.R), "z BETWEEN "+arg(n.Z-n.R)+" AND "+arg(n.Z+n.R))
		if n.ThreeD {
			out = append(out, "y BETWEEN "+arg(n.Y-n.R)+" AND "+arg(n.Y+n.R))
		}
	}
	return out
}

// fewInRange reports whether pq's range is better read by its index and
// sorted than found by the walk back over time, for a page of page rows.
// A steps: range is read by its index whenever the planner expects at
// most rangeScanMax rows in it: steps grow with time, so its matches are
// bunched in time and the walk may pass every newer row first. A near:
// box alone is read by its index when that is also cheaper than the walk
// is expected to be (page × table rows / box rows, were its rows spread
// over time, at walkCheaper rows for one): a place visited a few times
// long ago is read directly, a place visited all along is found by the
// walk.
func (q *Querier) fewInRange(ctx context.Context, pq *query.Query, page int) (bool, error) {
	var args []any
	conds := rangeConds(pq, func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	})
	var plan []byte
	if err := q.db.QueryRow(ctx, "EXPLAIN (FORMAT JSON) SELECT 1 FROM mfm_episodes WHERE "+strings.Join(conds, " AND "), args...).Scan(&plan); err != nil {
		return false, fmt.Errorf("query: the shared database did not answer: %w", err)
	}
	var v []struct {
		Plan struct {
			Rows float64 `json:"Plan Rows"`
		} `json:"Plan"`
	}
	if err := json.Unmarshal(plan, &v); err != nil || len(v) == 0 {
		return false, fmt.Errorf("query: unreadable plan estimate (%v)", err)
	}
	r := v[0].Plan.Rows
	if r > rangeScanMax {
		return false, nil
	}
	if pq.Steps != nil {
		return true, nil
	}
	var total float64
	if err := q.db.QueryRow(ctx, `SELECT greatest(reltuples, 0)::float8 FROM pg_class WHERE oid = 'mfm_episodes'::regclass`).Scan(&total); err != nil {
		return false, fmt.Errorf("query: the shared database did not answer: %w", err)
	}
	return r*r*walkCheaper <= float64(page)*total, nil
}

// walkCheaper is how many rows the walk back over time reads for the cost
// of one row read through a range's index: the walk follows the order the
// rows were written in, the range's rows lie anywhere in the table
// (EXPLAIN ANALYZE at 1M rows: a 8,923-row box read by its index took
// 42–60 ms, the walk past 7,200 rows 2.6–11 ms).
const walkCheaper = 8

// collect runs sql and appends the rows that match pq exactly and are in
// the catalog, up to limit hits in all (0: no limit). It returns the
// number of rows the database returned.
func (q *Querier) collect(ctx context.Context, sql string, args []any, pq *query.Query, hits *[]hit, limit int) (int, error) {
	rows, err := q.db.Query(ctx, sql, args...)
	if err != nil {
		return 0, fmt.Errorf("query: the shared database did not answer: %w", err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var agent, id, raw string
		var life int
		var at time.Time
		if err := rows.Scan(&agent, &life, &id, &raw, &at); err != nil {
			return n, fmt.Errorf("query: %w", err)
		}
		n++
		if limit > 0 && len(*hits) >= limit {
			continue
		}
		r, err := episodes.ParseRow([]byte(raw))
		if err != nil || !pq.Match(&r) || !q.cat.has(agent, life, id) {
			continue
		}
		dir := q.dir(agent, life, id)
		*hits = append(*hits, hit{at: at, row: labelRow(r.Raw, agent, dir), dir: dir})
	}
	if err := rows.Err(); err != nil {
		return n, fmt.Errorf("query: the shared database did not answer: %w", err)
	}
	return n, nil
}

// dir is the mount-relative directory of a shared episode.
func (q *Querier) dir(agent string, life int, id string) string {
	if life == q.cat.currentLife(agent) {
		return "agents/" + agent + "/" + episodes.EpisodesDir + "/" + id
	}
	return "agents/" + agent + "/" + episodes.PreviousDir + "/" + episodes.LifeName(life) + "/" + episodes.EpisodesDir + "/" + id
}

// RefuseAgents wraps the querier of a mount without sharing: a query with
// an agent: term gets an error saying it needs a shared mount, instead of
// an answer from the local store alone.
func RefuseAgents(local LocalQuerier) LocalQuerier { return refuseAgents{local} }

type refuseAgents struct{ LocalQuerier }

func (r refuseAgents) Query(ctx context.Context, s string) ([][]byte, []string, error) {
	pq, err := query.Parse(s)
	if err != nil {
		return nil, nil, err
	}
	if pq.Agent != "" || pq.AllAgents {
		return nil, nil, &query.Error{Term: "agent:", Msg: "this mount is not shared (mfmd mount --shared postgres://… --objects s3://… --agent NAME)"}
	}
	return r.LocalQuerier.Query(ctx, s)
}
