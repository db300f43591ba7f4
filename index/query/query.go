// Package query parses and evaluates MFM's cue query language: one string
// of space-separated terms, all of which must hold, answered in
// chronological order (docs/QUERY.md). Parsing and the exact per-row match
// live here; package index finds the candidate rows (a scan or the bleve
// index) and applies Match, life and last:N.
package query

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/mfm-project/mfm/episodes"
)

// DefaultRadius is the near: radius when no r: term is given (the paper's
// episodes.py default).
const DefaultRadius = 6

// MaxLen caps a query's length in bytes. It is the longest name of a
// file (NAME_MAX), so a query fits in one path component of the mount
// (q/<query>/) and the same queries are accepted there, by mfmd q and
// over MCP.
const MaxLen = 255

// IntRange is an inclusive range of steps.
type IntRange struct{ A, B int64 }

// FloatRange is a range of y. Min and Max are ±Inf when open; the
// Exclusive flags make an end strict (y:<20, y:>5).
type FloatRange struct {
	Min, Max                   float64
	MinExclusive, MaxExclusive bool
}

// Contains reports whether v lies in the range.
func (r FloatRange) Contains(v float64) bool {
	if v < r.Min || (r.MinExclusive && v == r.Min) {
		return false
	}
	if v > r.Max || (r.MaxExclusive && v == r.Max) {
		return false
	}
	return true
}

// Near is a distance filter: x/z distance, or x/y/z when ThreeD.
type Near struct {
	X, Y, Z, R float64
	ThreeD     bool
}

// Query is a parsed query. The zero value of a field means "not given".
type Query struct {
	// Words are the free words and "phrases", each as its token
	// sequence (Tokens); a row matches when each sequence appears, in
	// order and consecutively, in one of the row's text fields.
	Words   [][]string
	Tags    []string // tag:T, each must be present
	NotTags []string // -tag:T, none may be present
	Actions []string // action:A; the row's action kind must be one of them
	// Events are the event:WORD terms, each as its token sequence; a row
	// matches when each appears consecutively in one of its event lines.
	Events [][]string
	Steps  *IntRange
	Near   *Near
	Y      *FloatRange
	Since  time.Time // since:, inclusive
	Until  time.Time // until:, inclusive (a bare date covers its whole day)
	// Life is the life asked for with life:N; 0 is the current life.
	Life     int
	AllLives bool // life:all
	Last     int  // last:N; 0 = all
	InMine   bool // in:mine: episodes cited by mine/ whose citing paragraph matches Words
	// Agent is the agent asked for with agent:NAME, AllAgents (agent:all)
	// every agent of a shared mount; "" is this agent's own store. A
	// shared mount answers them (package fleet); the local index does not.
	Agent     string
	AllAgents bool
}

// ValidAgentName reports whether name can name an agent: 1 to 64 of
// a-z 0-9 _ - ., starting with a letter or digit, and not "all".
func ValidAgentName(name string) bool {
	if name == "" || len(name) > 64 || name == "all" {
		return false
	}
	for i, c := range name {
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || i > 0 && (c == '_' || c == '-' || c == '.')
		if !ok {
			return false
		}
	}
	return true
}

// Error is a parse error: the bad term and what is wrong with it.
type Error struct {
	Term string // the offending term as written ("" for the whole query)
	Msg  string
}

func (e *Error) Error() string {
	if e.Term == "" {
		return "query: " + e.Msg
	}
	return fmt.Sprintf("query: bad term %q: %s", e.Term, e.Msg)
}

// Grammar is the query language's help text.
func Grammar() string {
	return `Query grammar: space-separated terms, all must hold; results in chronological order.
  word "a phrase"     free text, case-insensitive, matched as whole words against
                      summary, tags, action kind, note and events
  tag:T   -tag:T      has tag T / does not have tag T
  action:A            the action kind is A (repeat to allow several)
  event:WORD          an event line has the word (event:hurt; event:fall_damage is
                      the words "fall damage" in one event line)
  steps:A..B          the episode's steps overlap A..B (whole numbers, A <= B)
  near:X,Z  near:X,Y,Z  within r: of the point (x/z distance, or 3D); r:R (default 6)
  y:A..B  y:<N  y:>N  the y coordinate is in A..B (inclusive) / below N / above N
  life:N  life:all    an earlier life N, or every life (default: the current life)
  since:T  until:T    recorded at or after / at or before T (RFC 3339 or YYYY-MM-DD)
  last:N              keep only the most recent N matches
  in:mine             episodes cited in mine/ files, in paragraphs or list items
                      holding the words
  agent:NAME agent:all  another agent's episodes, or every agent's (shared mounts)
Examples: tag:stuck last:5   action:mine_ahead steps:100..400   near:-256,-138 r:10 y:<5
`
}

// Parse parses a query string.
func Parse(s string) (*Query, error) {
	q, _, err := ParseTerms(s)
	return q, err
}

// ParseTerms parses a query string and also returns its terms in the
// order they were written (for explaining a query term by term).
func ParseTerms(s string) (*Query, []Term, error) {
	if len(s) > MaxLen {
		return nil, nil, &Error{Msg: fmt.Sprintf("%d bytes, longer than the %d bytes a query may be", len(s), MaxLen)}
	}
	terms, err := split(s)
	if err != nil {
		return nil, nil, err
	}
	if len(terms) == 0 {
		return nil, nil, &Error{Msg: "empty query (write at least one term, e.g. last:20)"}
	}
	p := &parser{q: &Query{}, seen: map[string]string{}}
	for _, t := range terms {
		if err := p.term(t); err != nil {
			return nil, nil, err
		}
	}
	q, err := p.finish()
	if err != nil {
		return nil, nil, err
	}
	return q, p.terms, nil
}

// parser is the state of one Parse: the query so far, the r: term (it
// applies to near: wherever that stands) and the keys given once.
type parser struct {
	q          *Query
	radius     *float64
	radiusTerm string
	seen       map[string]string // key -> the term that gave it
	terms      []Term            // the terms so far, as written
}

// term adds one term to the query and records it in p.terms.
func (p *parser) term(t term) error {
	if err := p.addTerm(t); err != nil {
		return err
	}
	p.terms = append(p.terms, p.written(t))
	return nil
}

// addTerm adds one term to the query.
func (p *parser) addTerm(t term) error {
	if t.quoted {
		toks := Tokens(t.text)
		if len(toks) == 0 {
			return &Error{Term: `"` + t.text + `"`, Msg: "a phrase needs at least one letter or digit"}
		}
		p.q.Words = append(p.q.Words, toks)
		return nil
	}
	key, val, hasKey := strings.Cut(t.text, ":")
	if !hasKey {
		if strings.HasPrefix(t.text, "-") {
			return &Error{Term: t.text, Msg: "only tags can be negated (-tag:T)"}
		}
		toks := Tokens(t.text)
		if len(toks) == 0 {
			return &Error{Term: t.text, Msg: "a word needs at least one letter or digit"}
		}
		p.q.Words = append(p.q.Words, toks)
		return nil
	}
	parse, ok := keyedTerms[key]
	if !ok {
		return &Error{Term: t.text, Msg: "unknown term " + strconv.Quote(key+":") + " (terms: tag: -tag: action: event: steps: near: r: y: life: since: until: last: in: agent:)"}
	}
	if err := parse(p, key, val, t.text); err != nil {
		return &Error{Term: t.text, Msg: err.Error()}
	}
	return nil
}

// keyedTerms parse the value of each key:value term into p.q; an error
// is the message for the term.
var keyedTerms = map[string]func(p *parser, key, val, text string) error{
	"tag":    (*parser).tag,
	"-tag":   (*parser).tag,
	"action": (*parser).action,
	"event":  (*parser).event,
	"steps":  (*parser).steps,
	"near":   (*parser).near,
	"r":      (*parser).r,
	"y":      (*parser).y,
	"life":   (*parser).life,
	"since":  (*parser).sinceUntil,
	"until":  (*parser).sinceUntil,
	"last":   (*parser).last,
	"in":     (*parser).in,
	"agent":  (*parser).agent,
}

// once fails if key was given before.
func (p *parser) once(key, text string) error {
	if prev, ok := p.seen[key]; ok {
		return fmt.Errorf("%s: given twice (also %q)", key, prev)
	}
	p.seen[key] = text
	return nil
}

func (p *parser) tag(key, val, _ string) error {
	if val == "" || strings.ContainsAny(val, " \t") {
		return errors.New("tag: wants a tag name, e.g. tag:stuck")
	}
	if key == "tag" {
		p.q.Tags = append(p.q.Tags, val)
	} else {
		p.q.NotTags = append(p.q.NotTags, val)
	}
	return nil
}

func (p *parser) action(_, val, _ string) error {
	if val == "" {
		return errors.New("action: wants an action kind, e.g. action:mine_ahead")
	}
	p.q.Actions = append(p.q.Actions, val)
	return nil
}

func (p *parser) event(_, val, _ string) error {
	toks := Tokens(val)
	if len(toks) == 0 {
		return errors.New("event: wants a word of an event line, e.g. event:hurt")
	}
	p.q.Events = append(p.q.Events, toks)
	return nil
}

func (p *parser) steps(key, val, text string) error {
	if err := p.once(key, text); err != nil {
		return err
	}
	a, b, ok := strings.Cut(val, "..")
	lo, err1 := strconv.ParseInt(a, 10, 64)
	hi, err2 := strconv.ParseInt(b, 10, 64)
	if !ok || err1 != nil || err2 != nil || lo < 0 || lo > hi {
		return errors.New("steps: wants A..B with whole numbers 0 <= A <= B, e.g. steps:100..200")
	}
	p.q.Steps = &IntRange{A: lo, B: hi}
	return nil
}

func (p *parser) near(key, val, text string) error {
	if err := p.once(key, text); err != nil {
		return err
	}
	parts := strings.Split(val, ",")
	if len(parts) != 2 && len(parts) != 3 {
		return errors.New("near: wants X,Z or X,Y,Z, e.g. near:-256,-138")
	}
	var v [3]float64
	for i, s := range parts {
		f, err := parseFloat(s)
		if err != nil {
			return errors.New("near: coordinate " + strconv.Quote(s) + " is not a number")
		}
		v[i] = f
	}
	p.q.Near = &Near{X: v[0], Z: v[1], R: DefaultRadius}
	if len(parts) == 3 {
		p.q.Near = &Near{X: v[0], Y: v[1], Z: v[2], R: DefaultRadius, ThreeD: true}
	}
	return nil
}

func (p *parser) r(key, val, text string) error {
	if err := p.once(key, text); err != nil {
		return err
	}
	f, err := parseFloat(val)
	if err != nil || f < 0 {
		return errors.New("r: wants a radius >= 0, e.g. r:8")
	}
	p.radius, p.radiusTerm = &f, text
	return nil
}

func (p *parser) y(key, val, text string) error {
	if err := p.once(key, text); err != nil {
		return err
	}
	r, err := parseYRange(val)
	if err != nil {
		return err
	}
	p.q.Y = r
	return nil
}

func (p *parser) life(key, val, text string) error {
	if err := p.once(key, text); err != nil {
		return err
	}
	if val == "all" {
		p.q.AllLives = true
		return nil
	}
	n, err := strconv.Atoi(val)
	if err != nil || n < 1 {
		return errors.New("life: wants a life number >= 1 or all, e.g. life:1")
	}
	p.q.Life = n
	return nil
}

// sinceUntil parses since: and until: (a bare date as until: covers its day).
func (p *parser) sinceUntil(key, val, text string) error {
	if err := p.once(key, text); err != nil {
		return err
	}
	tm, err := parseTime(val, key == "until")
	if err != nil {
		return errors.New(key + ": wants an RFC 3339 time or a date, e.g. " + key + ":2026-12-02 or " + key + ":2026-12-02T21:05:00Z")
	}
	if key == "since" {
		p.q.Since = tm
	} else {
		p.q.Until = tm
	}
	return nil
}

func (p *parser) last(key, val, text string) error {
	if err := p.once(key, text); err != nil {
		return err
	}
	n, err := strconv.Atoi(val)
	if err != nil || n < 1 {
		return errors.New("last: wants a whole number >= 1, e.g. last:20")
	}
	p.q.Last = n
	return nil
}

func (p *parser) in(key, val, text string) error {
	if val != "mine" {
		return errors.New("in: accepts only in:mine")
	}
	if err := p.once(key, text); err != nil {
		return err
	}
	p.q.InMine = true
	return nil
}

// agent parses agent:NAME and agent:all (rows shared by other agents).
func (p *parser) agent(key, val, text string) error {
	if err := p.once(key, text); err != nil {
		return err
	}
	if val == "all" {
		p.q.AllAgents = true
		return nil
	}
	if !ValidAgentName(val) {
		return errors.New("agent: wants an agent name (a-z 0-9 _ - ., up to 64) or all, e.g. agent:alice")
	}
	p.q.Agent = val
	return nil
}

// finish checks what no single term can: r: needs near:, until: after since:.
func (p *parser) finish() (*Query, error) {
	q := p.q
	if p.radius != nil {
		if q.Near == nil {
			return nil, &Error{Term: p.radiusTerm, Msg: "r: needs a near: term"}
		}
		q.Near.R = *p.radius
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && q.Until.Before(q.Since) {
		return nil, &Error{Term: p.seen["until"], Msg: "until: is before since:"}
	}
	return q, nil
}

type term struct {
	text   string
	quoted bool
}

// split cuts s into terms at spaces; "…" groups a phrase.
func split(s string) ([]term, error) {
	var out []term
	i := 0
	for i < len(s) {
		switch c := s[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '"':
			end := strings.IndexByte(s[i+1:], '"')
			if end < 0 {
				return nil, &Error{Term: s[i:], Msg: "unterminated phrase (a closing \" is missing)"}
			}
			out = append(out, term{text: s[i+1 : i+1+end], quoted: true})
			i += end + 2
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\n\r", rune(s[j])) {
				if s[j] == '"' {
					return nil, &Error{Term: s[i:], Msg: "a quote may only start a phrase"}
				}
				j++
			}
			out = append(out, term{text: s[i:j]})
			i = j
		}
	}
	return out, nil
}

func parseFloat(s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("not a finite number: %q", s)
	}
	return f, nil
}

func parseYRange(v string) (*FloatRange, error) {
	const msg = "y: wants A..B, <N or >N, e.g. y:-5..10 or y:<20"
	r := &FloatRange{Min: math.Inf(-1), Max: math.Inf(1)}
	switch {
	case strings.HasPrefix(v, "<"):
		f, err := parseFloat(v[1:])
		if err != nil {
			return nil, fmt.Errorf("%s", msg)
		}
		r.Max, r.MaxExclusive = f, true
	case strings.HasPrefix(v, ">"):
		f, err := parseFloat(v[1:])
		if err != nil {
			return nil, fmt.Errorf("%s", msg)
		}
		r.Min, r.MinExclusive = f, true
	default:
		a, b, ok := strings.Cut(v, "..")
		lo, err1 := parseFloat(a)
		hi, err2 := parseFloat(b)
		if !ok || err1 != nil || err2 != nil || lo > hi {
			return nil, fmt.Errorf("%s", msg)
		}
		r.Min, r.Max = lo, hi
	}
	return r, nil
}

// parseTime accepts RFC 3339 (with or without fractional seconds) or a
// date; a date as an until: bound means the end of that day (UTC).
func parseTime(v string, endOfDay bool) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	d, err := time.Parse(time.DateOnly, v)
	if err != nil {
		return time.Time{}, err
	}
	if endOfDay {
		return d.Add(24*time.Hour - time.Nanosecond), nil
	}
	return d, nil
}

// Tokens splits s into lowercased runs of letters and digits: the unit
// free words are matched by ("mine_ahead" is "mine", "ahead").
func Tokens(s string) []string {
	f := strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
	for i := range f {
		f[i] = strings.ToLower(f[i])
	}
	return f
}

// TextFields are the row texts free words are matched against: summary,
// each tag, the action kind, the note and each event line.
func TextFields(r *episodes.Row) []string {
	f := make([]string, 0, len(r.Tags)+len(r.Events)+3)
	f = append(f, r.Summary)
	f = append(f, r.Tags...)
	if a := r.Action(); a != "" {
		f = append(f, a)
	}
	if r.Note != "" {
		f = append(f, r.Note)
	}
	f = append(f, r.Events...)
	return f
}

// ContainsWords reports whether every word sequence appears consecutively
// in the tokens of one of texts.
func ContainsWords(words [][]string, texts []string) bool {
	if len(words) == 0 {
		return true
	}
	toks := make([][]string, len(texts))
	for i, t := range texts {
		toks[i] = Tokens(t)
	}
	for _, w := range words {
		found := false
		for _, tk := range toks {
			if hasRun(tk, w) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func hasRun(toks, w []string) bool {
	for i := 0; i+len(w) <= len(toks); i++ {
		ok := true
		for j := range w {
			if toks[i+j] != w[j] {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// Match reports whether row r satisfies every row-level term: words
// (unless InMine, where they apply to the citing paragraph), tags,
// actions, events, steps, near, y, since and until. Life, Last and InMine's citation test
// are applied by the searcher.
func (q *Query) Match(r *episodes.Row) bool {
	for _, t := range q.Tags {
		if !r.HasTag(t) {
			return false
		}
	}
	for _, t := range q.NotTags {
		if r.HasTag(t) {
			return false
		}
	}
	if len(q.Actions) > 0 {
		a, ok := r.Action(), false
		for _, want := range q.Actions {
			if a == want {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	if !ContainsWords(q.Events, r.Events) {
		return false
	}
	if !q.MatchPlace(r.X, r.Y, r.Z, r.FirstStep, r.LastStep) {
		return false
	}
	if !q.Since.IsZero() || !q.Until.IsZero() {
		t, err := time.Parse(time.RFC3339Nano, r.Time)
		if err != nil {
			return false // a row without a time cannot be placed in time
		}
		if (!q.Since.IsZero() && t.Before(q.Since)) || (!q.Until.IsZero() && t.After(q.Until)) {
			return false
		}
	}
	if !q.InMine && !ContainsWords(q.Words, TextFields(r)) {
		return false
	}
	return true
}

// MatchPlace reports whether a row at x, y, z whose steps are first..last
// satisfies the query's steps, near and y terms (the part of Match an
// index can check from its own copy of those numbers).
func (q *Query) MatchPlace(x, y, z float64, first, last int64) bool {
	if s := q.Steps; s != nil && (last < s.A || first > s.B) {
		return false
	}
	if n := q.Near; n != nil {
		dx, dz := x-n.X, z-n.Z
		d2 := dx*dx + dz*dz
		if n.ThreeD {
			dy := y - n.Y
			d2 += dy * dy
		}
		if d2 > n.R*n.R {
			return false
		}
	}
	if q.Y != nil && !q.Y.Contains(y) {
		return false
	}
	return true
}

// WantsLife reports whether a row of life n (current is the store's
// current life number) is in the query's lives.
func (q *Query) WantsLife(n, current int) bool {
	switch {
	case q.AllLives:
		return true
	case q.Life != 0:
		return n == q.Life
	default:
		return n == current
	}
}
