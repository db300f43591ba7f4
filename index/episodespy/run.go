// Package episodespy is a byte-exact drop-in for the paper's query tool,
// tools/episodes.py: the same flags (argparse-compatible, with unique
// prefixes and --flag=value), the same filter order and semantics and the
// same output lines. It reads the store's files directly (a linear scan, as
// the tool does); the cue index and its query language live in package
// index. It renders no images itself beyond a plain fallback: callers pass
// a Renderer (package view) for --sheet and --then-now.
package episodespy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/mfm-project/mfm/episodes"
)

// Renderer draws the tool's images. Paths are absolute file paths.
type Renderer interface {
	// Sheet tiles frames into one labelled contact sheet (PNG bytes); a
	// missing frame is drawn as a placeholder, not an error.
	Sheet(ctx context.Context, frames, labels []string) ([]byte, error)
	// ThenNow puts the frame then beside the frame now (PNG bytes).
	ThenNow(ctx context.Context, then, now, thenLabel, nowLabel string) ([]byte, error)
}

// QuestionRenderer is a Renderer that can also write the question a
// then-and-now pair answers (--q) onto the image; --then-now uses it when
// the Renderer has it.
type QuestionRenderer interface {
	ThenNowQ(ctx context.Context, then, now, thenLabel, nowLabel, question string) ([]byte, error)
}

// Env is what one call runs against.
type Env struct {
	Store  string    // the store (memory root) directory
	Cwd    string    // directory relative output paths (--sheet, --out) resolve against; "" = process cwd
	Render Renderer  // nil: the plain built-in renderer
	Stdout io.Writer // the tool's stdout
	Stderr io.Writer // the tool's stderr
}

// Main runs one call of the tool with argv (the arguments after
// "episodes.py") and returns its exit status: 0, 2 for a usage error, 1
// for anything else that went wrong.
func Main(ctx context.Context, argv []string, env Env) int {
	o, err := Parse(argv)
	var ue *UsageError
	if errors.As(err, &ue) {
		io.WriteString(env.Stderr, ue.Stderr())
		return 2
	}
	if o.Help {
		io.WriteString(env.Stdout, Help())
		return 0
	}
	res, err := Run(ctx, o, env)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", Prog, err)
		return 1
	}
	io.WriteString(env.Stdout, res.Stdout)
	io.WriteString(env.Stderr, res.Stderr)
	return res.Code
}

// Result is what a call prints.
type Result struct {
	Stdout, Stderr string
	Code           int
	Rows           []*Row // the rows printed, in order
}

// Row is one index row as the tool sees it.
type Row struct {
	Raw  []byte // the row as printed by --json before "note" is added
	Life int    // 0 for the queried root's own rows, N for previous/life_N

	ID         string       `json:"id"`
	Path       string       `json:"path"`
	Image      string       `json:"image"`
	FirstStep  *json.Number `json:"first_step"`
	LastStep   *json.Number `json:"last_step"`
	X          *float64     `json:"x"`
	Y          *float64     `json:"y"`
	Z          *float64     `json:"z"`
	Tags       []string     `json:"tags"`
	ActionKind *string      `json:"action_kind"`
	Summary    string       `json:"summary"`
	Note       string       `json:"note"`
	Perception string       `json:"perception"`
	Effect     string       `json:"effect"`

	note string // the note printed: the row's own, or its outcome's first
	root string // the directory Path is relative to
}

// Dir is the row's episode directory.
func (r *Row) Dir() string { return filepath.Join(r.root, filepath.FromSlash(r.Path)) }

func num(n *json.Number) (float64, bool) {
	if n == nil {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}

// pyNum prints a JSON number as Python prints the decoded value.
func pyNum(n json.Number) string {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		return s
	}
	f, err := n.Float64()
	if err != nil {
		return s
	}
	return episodes.FormatPyFloat(f)
}

// ReadIndex reads the complete, well-formed rows of dir/index.jsonl. A
// missing file has no rows. Life is stamped on every row.
func ReadIndex(dir string, life int) ([]*Row, error) {
	var rows []*Row
	_, err := episodes.ScanFile(filepath.Join(dir, episodes.IndexFileName), 0, func(l episodes.Line) error {
		line := bytes.TrimRight(l.Data, "\r")
		if len(bytes.TrimSpace(line)) == 0 {
			return nil
		}
		r := &Row{}
		if err := json.Unmarshal(line, r); err != nil {
			return nil // the tool would stop here; a malformed row is skipped
		}
		r.Raw = append([]byte(nil), line...)
		r.Life = life
		r.root = dir
		rows = append(rows, r)
		return nil
	})
	return rows, err
}

// previousRows reads root/previous/life_*/index.jsonl, oldest life first;
// each row's path and image gain the prefix previous/life_N/ and the row
// gains "life": N when it has none.
func previousRows(root string) ([]*Row, error) {
	ents, err := os.ReadDir(filepath.Join(root, episodes.PreviousDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	type life struct {
		n    int
		name string
	}
	var lives []life
	for _, e := range ents {
		if n, ok := episodes.ParseLifeName(e.Name()); ok && e.IsDir() {
			lives = append(lives, life{n, e.Name()})
		}
	}
	sort.Slice(lives, func(i, j int) bool { return lives[i].n < lives[j].n })
	var all []*Row
	for _, l := range lives {
		rows, err := ReadIndex(filepath.Join(root, episodes.PreviousDir, l.name), l.n)
		if err != nil {
			return nil, err
		}
		prefix := episodes.PreviousDir + "/" + l.name + "/"
		for _, r := range rows {
			r.Raw = rewritePrevious(r.Raw, prefix, l.n)
			if r.Path != "" {
				r.Path = prefix + r.Path
			}
			if r.Image != "" {
				r.Image = prefix + r.Image
			}
			r.root = root
		}
		all = append(all, rows...)
	}
	return all, nil
}

// rewritePrevious re-encodes a row of an earlier life with its path and
// image relative to the store root and a "life" field, keeping key order
// (json.dumps of the edited dict).
func rewritePrevious(raw []byte, prefix string, n int) []byte {
	keys, vals, err := orderedObject(raw)
	if err != nil {
		return raw
	}
	hasLife := false
	for i, k := range keys {
		switch k {
		case "path", "image":
			var s string
			if json.Unmarshal(vals[i], &s) == nil && s != "" {
				vals[i] = pyString(prefix + s)
			}
		case "life":
			hasLife = true
		}
	}
	if !hasLife {
		keys = append(keys, "life")
		vals = append(vals, []byte(strconv.Itoa(n)))
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.Write(pyString(k))
		b.WriteString(": ")
		b.Write(vals[i])
	}
	b.WriteByte('}')
	return b.Bytes()
}

// orderedObject splits a JSON object into its keys and raw values, in order.
func orderedObject(raw []byte) ([]string, []json.RawMessage, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	t, err := d.Token()
	if err != nil || t != json.Delim('{') {
		return nil, nil, fmt.Errorf("not an object")
	}
	var keys []string
	var vals []json.RawMessage
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, nil, err
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil, nil, err
		}
		keys = append(keys, k)
		vals = append(vals, v)
	}
	return keys, vals, nil
}

func pyString(s string) []byte {
	b, _ := episodes.MarshalPy(s)
	return b
}

// FirstNote is the tool's note: the first of notes, whitespace folded, cut
// to limit characters with "..." (Python's len counts code points).
func FirstNote(notes []string, limit int) string {
	if len(notes) == 0 {
		return ""
	}
	note := strings.Join(strings.Fields(notes[0]), " ")
	r := []rune(note)
	if len(r) <= limit {
		return note
	}
	return strings.TrimRightFunc(string(r[:limit-3]), isSpace) + "..."
}

func isSpace(r rune) bool {
	return strings.ContainsRune(" \t\n\r\v\f\x1c\x1d\x1e\x1f\x85\u00a0", r) || r > 0x7f && strings.TrimSpace(string(r)) == ""
}

// outcomeNotes reads the notes of a row's outcome.json.
func outcomeNotes(r *Row) []string {
	b, err := os.ReadFile(filepath.Join(r.Dir(), "outcome.json"))
	if err != nil {
		return nil
	}
	var o struct {
		Notes []json.RawMessage `json:"notes"`
	}
	if json.Unmarshal(b, &o) != nil {
		return nil
	}
	var out []string
	for _, n := range o.Notes {
		var s string
		if json.Unmarshal(n, &s) == nil {
			out = append(out, s)
		} else {
			out = append(out, string(n))
		}
	}
	return out
}

// episodeTexts are the files --grep searches besides the row.
var episodeTexts = []string{"action.json", "outcome.json", filepath.Join("state", "state.json")}

// Filters, in the order the tool applies them.

// Steps keeps rows whose [first_step, last_step] overlaps [min(a,b), max(a,b)].
func Steps(rows []*Row, a, b int) []*Row {
	lo, hi := float64(min(a, b)), float64(max(a, b))
	var out []*Row
	for _, r := range rows {
		f, ok1 := num(r.FirstStep)
		l, ok2 := num(r.LastStep)
		if ok1 && ok2 && f <= hi && l >= lo {
			out = append(out, r)
		}
	}
	return out
}

// Near keeps rows whose x/z position lies within radius of (x, z).
func Near(rows []*Row, x, z, radius float64) []*Row {
	var out []*Row
	for _, r := range rows {
		if r.X == nil || r.Z == nil {
			continue
		}
		if math.Hypot(*r.X-x, *r.Z-z) <= radius {
			out = append(out, r)
		}
	}
	return out
}

// Tagged keeps rows carrying tag.
func Tagged(rows []*Row, tag string) []*Row {
	var out []*Row
	for _, r := range rows {
		for _, t := range r.Tags {
			if t == tag {
				out = append(out, r)
				break
			}
		}
	}
	return out
}

// SameAction keeps rows of action kind kind.
func SameAction(rows []*Row, kind string) []*Row {
	var out []*Row
	for _, r := range rows {
		if r.ActionKind != nil && *r.ActionKind == kind {
			out = append(out, r)
		}
	}
	return out
}

// Grep keeps rows whose raw text or episode files contain text, ignoring case.
func Grep(rows []*Row, text string) []*Row {
	needle := strings.ToLower(text)
	var out []*Row
	for _, r := range rows {
		if strings.Contains(strings.ToLower(string(r.Raw)), needle) {
			out = append(out, r)
			continue
		}
		for _, f := range episodeTexts {
			b, err := os.ReadFile(filepath.Join(r.Dir(), f))
			if err == nil && strings.Contains(strings.ToLower(string(b)), needle) {
				out = append(out, r)
				break
			}
		}
	}
	return out
}

// Recent keeps the last k rows (none for k ≤ 0).
func Recent(rows []*Row, k int) []*Row {
	if k <= 0 {
		return nil
	}
	if k >= len(rows) {
		return rows
	}
	return rows[len(rows)-k:]
}

var lifeRoot = regexp.MustCompile(`^(?:\./)?previous/life_(\d+)/?$`)

// checkRoot refuses a memory root that is not a store: a query of a
// directory that does not exist, or holds no index.jsonl, format marker or
// previous/, would answer "(no matching episodes)" as if the store were
// empty.
func checkRoot(root, rootFlag, store string) error {
	what, hint := "store "+store, "give --store DIR or set MFM_STORE"
	if rootFlag != "" {
		what = fmt.Sprintf("--root %s (%s, relative to the store %s)", rootFlag, root, store)
		hint = "--root is relative to the store: previous/life_1, say"
	}
	fi, err := os.Stat(root)
	if err != nil || !fi.IsDir() {
		return fmt.Errorf("%s: no such directory (%s)", what, hint)
	}
	for _, n := range []string{episodes.IndexFileName, episodes.FormatFileName, episodes.PreviousDir} {
		if _, err := os.Stat(filepath.Join(root, n)); err == nil {
			return nil
		}
	}
	return fmt.Errorf("%s: not a store (no %s in it; %s)", what, episodes.IndexFileName, hint)
}

// Run executes parsed options.
func Run(ctx context.Context, o *Options, env Env) (*Result, error) {
	root := env.Store
	if o.Root != "" {
		if filepath.IsAbs(o.Root) {
			root = o.Root
		} else {
			root = filepath.Join(env.Store, filepath.FromSlash(o.Root))
		}
	}
	if err := checkRoot(root, o.Root, env.Store); err != nil {
		return nil, err
	}
	if o.ThenNow != nil {
		return thenNow(ctx, o, env, root)
	}
	rows, err := readRows(o, root)
	if err != nil {
		return nil, err
	}
	if o.SameScreen != nil {
		return &Result{Code: 2, Stderr: "cannot read " + *o.SameScreen + ": observation hashes are recorded on KiCad runs only\n"}, nil
	}
	rows = filter(rows, o)
	res := &Result{Rows: rows}
	var out, errb strings.Builder
	for _, r := range rows {
		r.note = r.Note
		if r.note == "" {
			r.note = FirstNote(outcomeNotes(r), 220)
		}
		if o.JSON {
			out.Write(JSONLine(r))
		} else {
			out.WriteString(HumanLine(r))
		}
		out.WriteByte('\n')
	}
	if len(rows) == 0 {
		errb.WriteString("(no matching episodes)\n")
	}
	if o.Sheet != nil && len(rows) > 0 {
		if err := writeSheet(ctx, env, *o.Sheet, rows); err != nil {
			return nil, err
		}
		errb.WriteString("sheet: " + *o.Sheet)
		if o.Q != nil {
			errb.WriteString("  Q: " + *o.Q)
		}
		errb.WriteByte('\n')
	} else if o.Q != nil && o.Sheet == nil {
		errb.WriteString("Q: " + *o.Q + "\n")
	}
	res.Stdout, res.Stderr = out.String(), errb.String()
	return res, nil
}

// readRows reads the rows the options ask for: every earlier life's
// (--previous), or the index at root, numbered with its life when root
// is previous/life_N.
func readRows(o *Options, root string) ([]*Row, error) {
	if o.Previous {
		return previousRows(root)
	}
	rows, err := ReadIndex(root, 0)
	if m := lifeRoot.FindStringSubmatch(o.Root); m != nil {
		n, _ := strconv.Atoi(m[1])
		for _, r := range rows {
			r.Life = n
		}
	}
	return rows, err
}

// filter applies the options' filters in the tool's order: steps, near,
// tag, action, grep, then the most recent N.
func filter(rows []*Row, o *Options) []*Row {
	if o.Steps != nil {
		rows = Steps(rows, o.Steps[0], o.Steps[1])
	}
	if o.Near != nil {
		rows = Near(rows, o.Near[0], o.Near[1], o.Radius)
	}
	if o.Tag != nil {
		rows = Tagged(rows, *o.Tag)
	}
	if o.Action != nil {
		rows = SameAction(rows, *o.Action)
	}
	if o.Grep != nil {
		rows = Grep(rows, *o.Grep)
	}
	if o.Last != nil {
		rows = Recent(rows, *o.Last)
	}
	return rows
}

// HumanLine is the tool's line for a row (without newline).
func HumanLine(r *Row) string {
	span := "steps ?"
	if r.FirstStep != nil && r.LastStep != nil {
		span = "steps " + pyNum(*r.FirstStep) + "-" + pyNum(*r.LastStep)
	}
	pos := ""
	if r.X != nil && r.Z != nil {
		pos = " pos=(" + strconv.FormatFloat(*r.X, 'f', 1, 64) + "," + strconv.FormatFloat(*r.Z, 'f', 1, 64) + ")"
	}
	tags := strings.Join(r.Tags, ",")
	if tags == "" {
		tags = "-"
	}
	act := "-"
	if r.ActionKind != nil && *r.ActionKind != "" {
		act = *r.ActionKind
	}
	var b strings.Builder
	b.WriteString(r.ID + "  " + span + "  tags=" + tags + pos + "  action=" + act + "  " + r.Summary)
	if r.Perception != "" {
		b.WriteString("  saw: " + r.Perception)
	}
	if r.Effect != "" {
		b.WriteString("  effect: " + r.Effect)
	}
	if r.note != "" {
		b.WriteString("  note: " + r.note)
	}
	b.WriteString("  -> " + r.Path + "/")
	return b.String()
}

// JSONLine is the tool's --json line for a row: the raw row, with the note
// added as a last "note" key when the row has none.
func JSONLine(r *Row) []byte {
	raw := r.Raw
	if r.note == "" || bytes.Contains(raw, []byte(`"note": `)) {
		return raw
	}
	t := bytes.TrimRight(raw, " \t\r\n")
	if len(t) == 0 || t[len(t)-1] != '}' {
		return raw
	}
	out := append([]byte(nil), t[:len(t)-1]...)
	out = append(out, `, "note": `...)
	out = append(out, pyString(r.note)...)
	return append(out, '}')
}

func outPath(env Env, p string) string {
	if filepath.IsAbs(p) || env.Cwd == "" {
		return p
	}
	return filepath.Join(env.Cwd, p)
}

// sheetCap is the most frames one sheet tiles (the most recent matches).
const sheetCap = 48

func writeSheet(ctx context.Context, env Env, dst string, rows []*Row) error {
	if len(rows) > sheetCap {
		rows = rows[len(rows)-sheetCap:]
	}
	frames := make([]string, len(rows))
	labels := make([]string, len(rows))
	for i, r := range rows {
		frames[i] = filepath.Join(r.root, filepath.FromSlash(r.Image))
		labels[i] = r.ID
		if r.FirstStep != nil {
			labels[i] += " @" + pyNum(*r.FirstStep)
		}
	}
	rd := env.Render
	if rd == nil {
		rd = plainRenderer{}
	}
	png, err := rd.Sheet(ctx, frames, labels)
	if err != nil {
		return fmt.Errorf("sheet %s: %w", dst, err)
	}
	if err := os.WriteFile(outPath(env, dst), png, 0o644); err != nil {
		return fmt.Errorf("sheet: %w", err)
	}
	return nil
}

var episodeRef = regexp.MustCompile(`(?:^|/)(previous/life_(\d+)/)?episodes/(ep_\d{6,})(?:/|$)`)

func thenNow(ctx context.Context, o *Options, env Env, root string) (*Result, error) {
	then := *o.ThenNow
	out := "then_now.png"
	if o.Out != nil {
		out = *o.Out
	}
	cur, err := ReadIndex(root, 0)
	if err != nil {
		return nil, err
	}
	prev, err := previousRows(root)
	if err != nil {
		return nil, err
	}
	var row *Row
	for _, r := range append(cur, prev...) {
		if r.ID == then {
			row = r
			break
		}
	}
	var label, frame string
	if row != nil {
		label = "THEN " + row.ID + " step "
		if row.FirstStep != nil {
			label += pyNum(*row.FirstStep)
		} else {
			label += "None"
		}
		if row.X != nil && row.Z != nil {
			label += " at (" + strconv.FormatFloat(*row.X, 'f', 0, 64) + "," + strconv.FormatFloat(*row.Z, 'f', 0, 64) + ")"
		}
		frame = filepath.Join(row.root, filepath.FromSlash(row.Image))
	} else {
		if !strings.ContainsAny(then, "/.") {
			msg := "no frame for " + episodes.PyQuote(then) + ": not an episode id in the index and not a file"
			return &Result{Code: 1, Stderr: msg + "\n"}, nil
		}
		label = "THEN " + then
		frame = then
		if !filepath.IsAbs(frame) {
			frame = filepath.Join(root, filepath.FromSlash(then))
			if st, err := os.Stat(frame); (err != nil || st.IsDir()) && episodeRef.MatchString(then) {
				m := episodeRef.FindStringSubmatch(then)
				frame = filepath.Join(root, filepath.FromSlash(m[1]), episodes.EpisodesDir, m[3], "observation", "image.png")
			}
		}
	}
	now := filepath.Join(root, episodes.NowDir, "frame.png")
	rd := env.Render
	if rd == nil {
		rd = plainRenderer{}
	}
	var png []byte
	if qr, ok := rd.(QuestionRenderer); ok && o.Q != nil && *o.Q != "" {
		png, err = qr.ThenNowQ(ctx, frame, now, label, "NOW", *o.Q)
	} else {
		png, err = rd.ThenNow(ctx, frame, now, label, "NOW")
	}
	if err != nil {
		return nil, fmt.Errorf("then-now: %w", err)
	}
	if err := os.WriteFile(outPath(env, out), png, 0o644); err != nil {
		return nil, fmt.Errorf("then-now: %w", err)
	}
	q := "(no --q given: what question does this look answer?)"
	if o.Q != nil && *o.Q != "" {
		q = *o.Q
	}
	res := &Result{Stdout: "wrote " + out + ": " + label + " | NOW. Q: " + q + ". View it with view_image.\n"}
	if row != nil {
		res.Rows = []*Row{row}
	}
	return res, nil
}
