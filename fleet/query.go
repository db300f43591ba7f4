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
	sql := "SELECT agent, life, num, id, row, at FROM mfm_episodes WHERE " + strings.Join(conds, " AND ")
	var hits []hit
	if pq.Last == 0 {
		cands, err := q.candidates(ctx, sql+" ORDER BY at, agent, life, num", args)
		if err != nil {
			return nil, err
		}
		return q.match(pq, cands, hits, 0), nil
	}
	// Newest first, a page at a time, until Last rows pass the exact match.
	// Without a range, the at index is walked backwards. With a steps: or
	// near: range, its GiST index (the range's columns and at) is read
	// nearest to the far future first, which is newest first inside the
	// range: the walk back over time would pass every newer row outside
	// it, and a range's rows can all be old (steps grow with time).
	order := " ORDER BY at DESC"
	if len(ranges) > 0 {
		order = " ORDER BY at <-> " + farFuture
	}
	page := max(pq.Last*2, 64)
	var before time.Time // the next page holds rows older than this
	for first := true; len(hits) < pq.Last; first = false {
		s, a := sql, slices.Clip(args)
		if !first {
			a = append(a, before)
			s += " AND at < $" + strconv.Itoa(len(a))
		}
		cands, err := q.candidates(ctx, s+order+" LIMIT $"+strconv.Itoa(len(a)+1), append(a, page))
		if err != nil {
			return nil, err
		}
		full := len(cands) == page
		if full {
			// The rows at the page's last time may go on past it: read
			// that time's rows whole, so ties are ordered like the rest.
			last := cands[len(cands)-1].at
			k := len(cands)
			for k > 0 && cands[k-1].at.Equal(last) {
				k--
			}
			a = append(a, last)
			tie, err := q.candidates(ctx, s+" AND at = $"+strconv.Itoa(len(a)), a)
			if err != nil {
				return nil, err
			}
			cands = append(cands[:k], tie...)
			before = last
		}
		sort.SliceStable(cands, func(i, j int) bool { return cands[j].before(cands[i]) })
		hits = q.match(pq, cands, hits, pq.Last)
		if !full {
			break
		}
	}
	for i, j := 0, len(hits)-1; i < j; i, j = i+1, j-1 {
		hits[i], hits[j] = hits[j], hits[i]
	}
	return hits, nil
}

// farFuture is later than any row's time (a row's time is RFC 3339, so
// its year has four digits): the distance from it orders rows newest
// first in a GiST index that holds at (btree_gist's <->).
const farFuture = "'10000-01-01 00:00:00+00'::timestamptz"

// rangeConds are pq's steps and near: conditions in the form their GiST
// indexes answer (supersets: query.Match decides exactly): a row's steps
// as a range, its x and z (and y for a 3-D near:) as bounds.
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

// candidate is a row the database returned, before the exact match.
type candidate struct {
	agent string
	life  int
	num   int64
	id    string
	raw   string
	at    time.Time
}

// before is the order of shared rows: by time, then agent, life and
// episode number.
func (c candidate) before(d candidate) bool {
	if !c.at.Equal(d.at) {
		return c.at.Before(d.at)
	}
	if c.agent != d.agent {
		return c.agent < d.agent
	}
	if c.life != d.life {
		return c.life < d.life
	}
	return c.num < d.num
}

// candidates runs sql (selecting agent, life, num, id, row, at).
func (q *Querier) candidates(ctx context.Context, sql string, args []any) ([]candidate, error) {
	rows, err := q.db.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("query: the shared database did not answer: %w", err)
	}
	defer rows.Close()
	var out []candidate
	for rows.Next() {
		var c candidate
		if err := rows.Scan(&c.agent, &c.life, &c.num, &c.id, &c.raw, &c.at); err != nil {
			return nil, fmt.Errorf("query: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("query: the shared database did not answer: %w", err)
	}
	return out, nil
}

// match appends to hits the candidates that match pq exactly and are in
// the catalog (delivered to agents/), up to limit hits in all (0: no
// limit).
func (q *Querier) match(pq *query.Query, cands []candidate, hits []hit, limit int) []hit {
	for _, c := range cands {
		if limit > 0 && len(hits) >= limit {
			break
		}
		r, err := episodes.ParseRow([]byte(c.raw))
		if err != nil || !pq.Match(&r) || !q.cat.has(c.agent, c.life, c.id) {
			continue
		}
		dir := q.dir(c.agent, c.life, c.id)
		hits = append(hits, hit{at: c.at, row: labelRow(r.Raw, c.agent, dir), dir: dir})
	}
	return hits
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
