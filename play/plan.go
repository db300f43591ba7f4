package play

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/mfm-project/mfm/harness"
)

// Entry is one plan entry: an atom or procedure call (Name, Args), or a
// raw action held for Repeat ticks.
type Entry struct {
	Name   string
	Args   []harness.Arg
	Action map[string]any // raw action; Name is empty
	Repeat int
	// Why is the agent's reason, printed as [PLAN] (JSON form only).
	Why string
}

// IsRaw reports whether the entry is a raw action.
func (e Entry) IsRaw() bool { return e.Name == "" }

// String is the entry in the log's form: go_to(x=-70,z=189) or
// {"forward":1} x20.
func (e Entry) String() string {
	if e.IsRaw() {
		b, _ := json.Marshal(e.Action)
		return fmt.Sprintf("%s x%d", b, e.Repeat)
	}
	var parts []string
	for _, a := range e.Args {
		parts = append(parts, a.Name+"="+fmtValue(a.Value))
	}
	return e.Name + "(" + strings.Join(parts, ",") + ")"
}

func fmtValue(v any) string {
	switch x := v.(type) {
	case string:
		if x == "" || strings.ContainsAny(x, " ;=,()\"'") {
			return strconv.Quote(x)
		}
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// MaxPlanEntries bounds a plan's length.
const MaxPlanEntries = 64

// ParsePlan reads a plan in either form:
//
//	go_to x=-70 z=189; mine_ahead; collect_drops item=tree; {"jump":1} x3
//
// (one line of entries separated by ";" or newlines; NAME then key=value
// arguments; a raw action is a JSON object with an optional xN repeat), or
// the paper's JSON plan: {"actions": [ENTRY, ...]} or [ENTRY, ...] with
// ENTRY {"procedure"|"atom": NAME, "args": {...}} or {"action": {...},
// "repeat": N} (optional "why").
func ParsePlan(src string) ([]Entry, error) {
	s := strings.TrimSpace(src)
	if s == "" {
		return nil, errors.New(`empty plan (want entries such as "go_to x=-70 z=189; mine_ahead" or {"actions": [...]})`)
	}
	var entries []Entry
	var err error
	if (s[0] == '{' || s[0] == '[') && json.Valid([]byte(s)) {
		entries, err = parseJSONPlan([]byte(s))
	} else {
		entries, err = parseLinePlan(s)
	}
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		return nil, errors.New("the plan has no entries")
	}
	if len(entries) > MaxPlanEntries {
		return nil, fmt.Errorf("the plan has %d entries, more than %d", len(entries), MaxPlanEntries)
	}
	return entries, nil
}

func parseJSONPlan(b []byte) ([]Entry, error) {
	var raw []json.RawMessage
	if b[0] == '{' {
		var top map[string]json.RawMessage
		if err := json.Unmarshal(b, &top); err != nil {
			return nil, fmt.Errorf("JSON plan: %w", err)
		}
		acts, ok := top["actions"]
		if !ok {
			return nil, errors.New(`JSON plan: no "actions" (want {"actions": [{"procedure": NAME, "args": {...}}, {"action": {...}, "repeat": N}, ...]})`)
		}
		for k := range top {
			if k != "actions" && k != "plan" && k != "why" {
				return nil, fmt.Errorf("JSON plan: unknown field %q (want \"actions\")", k)
			}
		}
		if err := json.Unmarshal(acts, &raw); err != nil {
			return nil, fmt.Errorf(`JSON plan: "actions" is not a list: %w`, err)
		}
	} else if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("JSON plan: %w", err)
	}
	out := make([]Entry, 0, len(raw))
	for i, r := range raw {
		e, err := parseJSONEntry(r)
		if err != nil {
			return nil, fmt.Errorf("JSON plan: actions[%d]: %w", i, err)
		}
		out = append(out, e)
	}
	return out, nil
}

func parseJSONEntry(r json.RawMessage) (Entry, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(r, &m); err != nil || m == nil {
		return Entry{}, errors.New(`not an object (want {"procedure": NAME, "args": {...}} or {"action": {...}, "repeat": N})`)
	}
	var e Entry
	for k := range m {
		switch k {
		case "procedure", "atom", "args", "action", "repeat", "why", "expect":
		default:
			return Entry{}, fmt.Errorf("unknown field %q", k)
		}
	}
	if w, ok := m["why"]; ok {
		_ = json.Unmarshal(w, &e.Why)
	}
	name := m["procedure"]
	if name == nil {
		name = m["atom"]
	}
	switch {
	case name != nil && m["action"] != nil:
		return Entry{}, errors.New(`give a procedure/atom or an action, not both`)
	case name != nil:
		if err := json.Unmarshal(name, &e.Name); err != nil || !harness.ValidName(e.Name) {
			return Entry{}, fmt.Errorf("%s is not a name", name)
		}
		if m["repeat"] != nil {
			return Entry{}, errors.New(`"repeat" belongs to a raw action`)
		}
		if a := m["args"]; a != nil && string(a) != "null" {
			args, err := objectArgs(a)
			if err != nil {
				return Entry{}, fmt.Errorf("args: %w", err)
			}
			e.Args = args
		}
		return e, nil
	case m["action"] != nil:
		d := json.NewDecoder(bytes.NewReader(m["action"]))
		d.UseNumber()
		if err := d.Decode(&e.Action); err != nil || e.Action == nil {
			return Entry{}, errors.New(`"action" is not an object of keys ({"forward": 1, "jump": 1})`)
		}
		e.Repeat = 1
		if rp := m["repeat"]; rp != nil {
			if err := json.Unmarshal(rp, &e.Repeat); err != nil {
				return Entry{}, fmt.Errorf(`"repeat" %s is not an integer`, rp)
			}
		}
		if e.Repeat < 1 {
			return Entry{}, fmt.Errorf(`"repeat" %d: want at least 1`, e.Repeat)
		}
		if m["args"] != nil {
			return Entry{}, errors.New(`"args" belongs to a procedure or atom`)
		}
		return e, nil
	}
	return Entry{}, errors.New(`no "procedure", "atom" or "action"`)
}

// objectArgs decodes a JSON object into arguments in key order.
func objectArgs(raw json.RawMessage) ([]harness.Arg, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	tok, err := d.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, errors.New("want a JSON object of name: value")
	}
	var args []harness.Arg
	for d.More() {
		kt, err := d.Token()
		if err != nil {
			return nil, err
		}
		k, _ := kt.(string)
		var v any
		if err := d.Decode(&v); err != nil {
			return nil, fmt.Errorf("argument %q: %w", k, err)
		}
		switch x := v.(type) {
		case json.Number:
			v = numberValue(x.String())
		case string, bool:
		default:
			return nil, fmt.Errorf("argument %q: want a number, string or bool", k)
		}
		args = append(args, harness.Arg{Name: k, Value: v})
	}
	if _, err := d.Token(); err != nil {
		return nil, err
	}
	return args, nil
}

// numberValue is an integer as int64, else float64 (a string that is no
// number stays a string).
func numberValue(s string) any {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return f
	}
	return s
}

func parseLinePlan(s string) ([]Entry, error) {
	var out []Entry
	for i, part := range splitEntries(s) {
		part = strings.TrimSpace(part)
		if part == "" || strings.HasPrefix(part, "#") {
			continue
		}
		e, err := parseLineEntry(part)
		if err != nil {
			return nil, fmt.Errorf("plan entry %d %q: %w", i+1, part, err)
		}
		out = append(out, e)
	}
	return out, nil
}

// splitEntries splits on ";" and newlines outside quotes and braces.
func splitEntries(s string) []string {
	var parts []string
	var cur strings.Builder
	depth, quote := 0, rune(0)
	esc := false
	for _, r := range s {
		switch {
		case esc:
			esc = false
		case quote != 0 && r == '\\':
			esc = true
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '"' || r == '\'':
			quote = r
		case r == '{':
			depth++
		case r == '}':
			if depth > 0 {
				depth--
			}
		case depth == 0 && (r == ';' || r == '\n'):
			parts = append(parts, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteRune(r)
	}
	return append(parts, cur.String())
}

func parseLineEntry(s string) (Entry, error) {
	if s[0] == '{' {
		end := strings.LastIndexByte(s, '}')
		if end < 0 {
			return Entry{}, errors.New("unclosed raw action object")
		}
		e := Entry{Repeat: 1}
		d := json.NewDecoder(strings.NewReader(s[:end+1]))
		d.UseNumber()
		if err := d.Decode(&e.Action); err != nil || e.Action == nil {
			return Entry{}, errors.New(`a raw action is a JSON object of keys: {"forward":1,"jump":1} x20`)
		}
		rest := strings.TrimSpace(s[end+1:])
		if rest != "" {
			n, err := strconv.Atoi(strings.TrimPrefix(rest, "x"))
			if !strings.HasPrefix(rest, "x") || err != nil || n < 1 {
				return Entry{}, fmt.Errorf("after a raw action want xN (repeat N ticks), got %q", rest)
			}
			e.Repeat = n
		}
		return e, nil
	}
	toks, err := tokens(s)
	if err != nil {
		return Entry{}, err
	}
	name := toks[0]
	// also accept go_to(x=1, z=2)
	if i := strings.IndexByte(name, '('); i > 0 {
		return parseCallForm(s)
	}
	if !harness.ValidName(name) || strings.Contains(name, "=") {
		return Entry{}, fmt.Errorf("%q is not an atom or procedure name", name)
	}
	e := Entry{Name: name}
	for _, t := range toks[1:] {
		a, err := argToken(t)
		if err != nil {
			return Entry{}, err
		}
		e.Args = append(e.Args, a)
	}
	return e, nil
}

// parseCallForm reads NAME(k=v, k=v), the form the log prints.
func parseCallForm(s string) (Entry, error) {
	open := strings.IndexByte(s, '(')
	if !strings.HasSuffix(s, ")") {
		return Entry{}, errors.New(`want NAME(k=v, ...) with a closing ")"`)
	}
	name := strings.TrimSpace(s[:open])
	if !harness.ValidName(name) {
		return Entry{}, fmt.Errorf("%q is not an atom or procedure name", name)
	}
	inner := strings.ReplaceAll(s[open+1:len(s)-1], ",", " ")
	e := Entry{Name: name}
	if strings.TrimSpace(inner) == "" {
		return e, nil
	}
	toks, err := tokens(inner)
	if err != nil {
		return Entry{}, err
	}
	for _, t := range toks {
		a, err := argToken(t)
		if err != nil {
			return Entry{}, err
		}
		e.Args = append(e.Args, a)
	}
	return e, nil
}

func argToken(t string) (harness.Arg, error) {
	k, v, ok := strings.Cut(t, "=")
	if !ok || k == "" {
		return harness.Arg{}, fmt.Errorf("argument %q: want key=value", t)
	}
	for _, r := range k {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_') {
			return harness.Arg{}, fmt.Errorf("argument %q: %q is not a parameter name", t, k)
		}
	}
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') {
		if v[0] == '"' {
			u, err := strconv.Unquote(v)
			if err != nil {
				return harness.Arg{}, fmt.Errorf("argument %q: bad quoted string", t)
			}
			return harness.Arg{Name: k, Value: u}, nil
		}
		return harness.Arg{Name: k, Value: v[1 : len(v)-1]}, nil
	}
	switch v {
	case "true":
		return harness.Arg{Name: k, Value: true}, nil
	case "false":
		return harness.Arg{Name: k, Value: false}, nil
	}
	return harness.Arg{Name: k, Value: numberValue(v)}, nil
}

// tokens splits on spaces outside quotes.
func tokens(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	quote := rune(0)
	esc := false
	for _, r := range s {
		switch {
		case esc:
			esc = false
		case quote != 0 && r == '\\':
			esc = true
		case quote != 0 && r == quote:
			quote = 0
		case quote == 0 && (r == '"' || r == '\''):
			quote = r
		case quote == 0 && unicode.IsSpace(r):
			if cur.Len() > 0 {
				out = append(out, cur.String())
				cur.Reset()
			}
			continue
		}
		cur.WriteRune(r)
	}
	if quote != 0 {
		return nil, errors.New("unclosed quote")
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	if len(out) == 0 {
		return nil, errors.New("empty entry")
	}
	return out, nil
}

// rawKeysOK checks a raw action's keys against the world's.
func rawKeysOK(action map[string]any, keys []string) error {
	ok := map[string]bool{}
	for _, k := range keys {
		ok[k] = true
	}
	var bad []string
	for k, v := range action {
		if !ok[k] {
			bad = append(bad, k)
			continue
		}
		if _, isNum := v.(json.Number); !isNum {
			if _, isF := v.(float64); !isF {
				return fmt.Errorf("raw action key %q: want a number (1 holds it, 0 releases)", k)
			}
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return fmt.Errorf("raw action: unknown key(s) %s (this world takes %s)", strings.Join(bad, ", "), strings.Join(keys, ", "))
	}
	if len(action) == 0 {
		return errors.New("raw action holds no key")
	}
	return nil
}
