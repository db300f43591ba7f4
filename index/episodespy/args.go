package episodespy

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/mfm-project/mfm/episodes"
)

// Prog is the program name argparse messages carry, as in the paper.
const Prog = "episodes.py"

// Options are the parsed flags of one call.
type Options struct {
	Root       string      // --root: the memory root, relative to the store ("" = the store)
	Last       *int        // --last N
	Steps      *[2]int     // --steps A B
	Near       *[2]float64 // --near X Z
	Radius     float64     // --radius R (6.0)
	Tag        *string     // --tag T
	Action     *string     // --action A
	Grep       *string     // --grep TEXT
	Previous   bool        // --previous
	SameScreen *string     // --same-screen PNG (KiCad runs only)
	Sheet      *string     // --sheet PNG
	JSON       bool        // --json
	Q          *string     // --q TEXT: the question a sheet or then-now answers
	ThenNow    *string     // --then-now ID|PATH
	Out        *string     // --out PNG (then-now output)
	Help       bool        // -h/--help was given: print Help() and exit 0
}

// action is one argparse option.
type action struct {
	strings []string // option strings, in the order given to add_argument
	dest    string
	nargs   int    // 0 (store_true), 1 or 2
	typ     string // "str", "int", "float"
	metavar []string
	hidden  bool // help=argparse.SUPPRESS: not in usage or help
	help    string
}

// actions in the order the paper's tool adds them; the three hidden ones
// come from its later version (the then-and-now view and the question a
// look answers) and stay out of the usage line so the usage is the run's.
var actions = []*action{
	{strings: []string{"-h", "--help"}, dest: "help", help: "show this help message and exit"},
	{strings: []string{"--root"}, dest: "root", nargs: 1, typ: "str", metavar: []string{"ROOT"}, help: "memory root (default: the store); previous/life_N queries that life alone"},
	{strings: []string{"--last"}, dest: "last", nargs: 1, typ: "int", metavar: []string{"LAST"}, help: "keep the most recent N matches"},
	{strings: []string{"--steps"}, dest: "steps", nargs: 2, typ: "int", metavar: []string{"A", "B"}, help: "episodes whose step interval overlaps [A, B]"},
	{strings: []string{"--near"}, dest: "near", nargs: 2, typ: "float", metavar: []string{"X", "Z"}, help: "episodes that started within --radius of (X, Z)"},
	{strings: []string{"--radius"}, dest: "radius", nargs: 1, typ: "float", metavar: []string{"RADIUS"}, help: "radius for --near (default 6.0)"},
	{strings: []string{"--tag"}, dest: "tag", nargs: 1, typ: "str", metavar: []string{"TAG"}, help: "episodes carrying this tag (stuck, damage, milestone, ...)"},
	{strings: []string{"--action"}, dest: "action", nargs: 1, typ: "str", metavar: []string{"ACTION"}, help: "episodes of this action kind (go_to, forward+jump, ...)"},
	{strings: []string{"--grep"}, dest: "grep", nargs: 1, typ: "str", metavar: []string{"GREP"}, help: "case-insensitive text in the row or its action/outcome/state files"},
	{strings: []string{"--previous"}, dest: "previous", help: "query the earlier lives (previous/life_*/)"},
	{strings: []string{"--same-screen"}, dest: "same_screen", nargs: 1, typ: "str", metavar: []string{"PNG"}, help: "episodes whose frame hash equals PNG's (KiCad runs)"},
	{strings: []string{"--sheet"}, dest: "sheet", nargs: 1, typ: "str", metavar: []string{"SHEET"}, help: "tile the matches' frames into one PNG"},
	{strings: []string{"--json"}, dest: "json", help: "print the raw rows"},
	{strings: []string{"--q"}, dest: "q", nargs: 1, typ: "str", metavar: []string{"Q"}, hidden: true},
	{strings: []string{"--then-now"}, dest: "then_now", nargs: 1, typ: "str", metavar: []string{"THEN_NOW"}, hidden: true},
	{strings: []string{"--out"}, dest: "out", nargs: 1, typ: "str", metavar: []string{"OUT"}, hidden: true},
}

// optionStrings lists every option string in insertion order, as
// argparse's _option_string_actions iterates them.
var optionStrings = func() []string {
	var s []string
	for _, a := range actions {
		s = append(s, a.strings...)
	}
	return s
}()

func lookup(opt string) *action {
	for _, a := range actions {
		for _, s := range a.strings {
			if s == opt {
				return a
			}
		}
	}
	return nil
}

// UsageError is an argparse error: the caller prints Usage(), then
// "episodes.py: error: " + Msg, and exits with status 2.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Stderr is the text argparse prints for the error, ending in a newline.
func (e *UsageError) Stderr() string {
	return Usage() + Prog + ": error: " + e.Msg + "\n"
}

// negativeNumber is argparse's _negative_number_matcher.
var negativeNumber = regexp.MustCompile(`^-\d+$|^-\d*\.\d+$`)

// classified is one argument string after argparse's _parse_optional.
type classified struct {
	opt      bool
	act      *action // nil for an unknown option
	optStr   string  // the option string as matched (full name)
	explicit *string // the value after "=", or after a short option
	raw      string
	dashes   bool // the first "--": the end of options
}

func classify(arg string) (classified, error) {
	c := classified{raw: arg}
	if arg == "" || arg[0] != '-' {
		return c, nil
	}
	if a := lookup(arg); a != nil {
		return classified{opt: true, act: a, optStr: arg, raw: arg}, nil
	}
	if len(arg) == 1 {
		return c, nil
	}
	if k, v, ok := strings.Cut(arg, "="); ok {
		if a := lookup(k); a != nil {
			return classified{opt: true, act: a, optStr: k, explicit: &v, raw: arg}, nil
		}
	}
	tuples := optionTuples(arg)
	if len(tuples) > 1 {
		names := make([]string, len(tuples))
		for i, t := range tuples {
			names[i] = t.optStr
		}
		return c, &UsageError{Msg: fmt.Sprintf("ambiguous option: %s could match %s", prefixOf(arg), strings.Join(names, ", "))}
	}
	if len(tuples) == 1 {
		return tuples[0], nil
	}
	if negativeNumber.MatchString(arg) {
		return c, nil
	}
	if strings.Contains(arg, " ") {
		return c, nil
	}
	return classified{opt: true, raw: arg, optStr: arg}, nil
}

// prefixOf is the option part of arg that argparse names in an
// ambiguity error.
func prefixOf(arg string) string {
	if strings.HasPrefix(arg, "--") {
		k, _, _ := strings.Cut(arg, "=")
		return k
	}
	return arg
}

// optionTuples is argparse's _get_option_tuples: options arg abbreviates.
func optionTuples(arg string) []classified {
	var out []classified
	if strings.HasPrefix(arg, "--") {
		prefix, val, hasVal := strings.Cut(arg, "=")
		for _, s := range optionStrings {
			if strings.HasPrefix(s, prefix) {
				c := classified{opt: true, act: lookup(s), optStr: s, raw: arg}
				if hasVal {
					v := val
					c.explicit = &v
				}
				out = append(out, c)
			}
		}
		return out
	}
	short, rest := arg[:2], arg[2:]
	for _, s := range optionStrings {
		switch {
		case s == short:
			v := rest
			out = append(out, classified{opt: true, act: lookup(s), optStr: s, explicit: &v, raw: arg})
		case strings.HasPrefix(s, arg):
			out = append(out, classified{opt: true, act: lookup(s), optStr: s, raw: arg})
		}
	}
	return out
}

// Parse parses argv as the paper's argparse parser does: unique prefixes
// of long options, --flag=value, negative numbers as values, the first
// error wins, unrecognized arguments are reported together at the end.
func Parse(argv []string) (*Options, error) {
	o := &Options{Radius: 6.0}
	cls := make([]classified, len(argv))
	afterDashes := false
	for i, a := range argv {
		if afterDashes {
			cls[i] = classified{raw: a}
			continue
		}
		if a == "--" {
			afterDashes = true
			cls[i] = classified{raw: a, dashes: true}
			continue
		}
		c, err := classify(a)
		if err != nil {
			return nil, err
		}
		cls[i] = c
	}
	var extras []string
	for i := 0; i < len(cls); i++ {
		c := cls[i]
		if !c.opt {
			extras = append(extras, c.raw)
			continue
		}
		if c.act == nil {
			extras = append(extras, c.raw)
			continue
		}
		a := c.act
		name := strings.Join(a.strings, "/")
		var vals []string
		if c.explicit != nil {
			switch {
			case a.nargs == 0:
				if !strings.HasPrefix(c.optStr, "--") && *c.explicit != "" {
					// -hX: argparse would go on to parse -X; help exits first.
					if a.dest == "help" {
						o.Help = true
						return o, nil
					}
				}
				return nil, &UsageError{Msg: fmt.Sprintf("argument %s: ignored explicit argument %s", name, episodes.PyQuote(*c.explicit))}
			case a.nargs == 1:
				vals = []string{*c.explicit}
			default:
				return nil, &UsageError{Msg: fmt.Sprintf("argument %s: expected %d arguments", name, a.nargs)}
			}
		} else {
			for len(vals) < a.nargs {
				j := i + 1 + len(vals)
				if j >= len(cls) || cls[j].opt || cls[j].dashes {
					if a.nargs == 1 {
						return nil, &UsageError{Msg: fmt.Sprintf("argument %s: expected one argument", name)}
					}
					return nil, &UsageError{Msg: fmt.Sprintf("argument %s: expected %d arguments", name, a.nargs)}
				}
				vals = append(vals, cls[j].raw)
			}
			i += len(vals)
		}
		if err := o.set(a, name, vals); err != nil {
			return nil, err
		}
		if o.Help {
			return o, nil
		}
	}
	if len(extras) > 0 {
		return nil, &UsageError{Msg: "unrecognized arguments: " + strings.Join(extras, " ")}
	}
	return o, nil
}

func (o *Options) set(a *action, name string, vals []string) error {
	ints := make([]int, len(vals))
	floats := make([]float64, len(vals))
	for i, v := range vals {
		switch a.typ {
		case "int":
			n, ok := pyInt(v)
			if !ok {
				return &UsageError{Msg: fmt.Sprintf("argument %s: invalid int value: %s", name, episodes.PyQuote(v))}
			}
			ints[i] = n
		case "float":
			f, ok := pyFloat(v)
			if !ok {
				return &UsageError{Msg: fmt.Sprintf("argument %s: invalid float value: %s", name, episodes.PyQuote(v))}
			}
			floats[i] = f
		}
	}
	str := func() *string { s := vals[0]; return &s }
	switch a.dest {
	case "help":
		o.Help = true
	case "root":
		o.Root = vals[0]
	case "last":
		n := ints[0]
		o.Last = &n
	case "steps":
		o.Steps = &[2]int{ints[0], ints[1]}
	case "near":
		o.Near = &[2]float64{floats[0], floats[1]}
	case "radius":
		o.Radius = floats[0]
	case "tag":
		o.Tag = str()
	case "action":
		o.Action = str()
	case "grep":
		o.Grep = str()
	case "previous":
		o.Previous = true
	case "same_screen":
		o.SameScreen = str()
	case "sheet":
		o.Sheet = str()
	case "json":
		o.JSON = true
	case "q":
		o.Q = str()
	case "then_now":
		o.ThenNow = str()
	case "out":
		o.Out = str()
	}
	return nil
}

var (
	pyIntRe   = regexp.MustCompile(`^[+-]?[0-9](_?[0-9])*$`)
	pyFloatRe = regexp.MustCompile(`^[+-]?(([0-9](_?[0-9])*)?\.?([0-9](_?[0-9])*)?([eE][+-]?[0-9](_?[0-9])*)?|inf|infinity|nan)$`)
)

// pyInt parses s like Python's int(s).
func pyInt(s string) (int, bool) {
	s = strings.TrimSpace(s)
	if !pyIntRe.MatchString(s) {
		return 0, false
	}
	n, err := strconv.Atoi(strings.ReplaceAll(s, "_", ""))
	return n, err == nil
}

// pyFloat parses s like Python's float(s).
func pyFloat(s string) (float64, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if !pyFloatRe.MatchString(s) {
		return 0, false
	}
	body := strings.TrimLeft(s, "+-")
	if body == "" || body == "." || strings.HasPrefix(body, "e") || strings.HasPrefix(body, ".e") {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
	if err != nil {
		// strconv reports range errors with ±Inf, as Python does
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return f, true
		}
		return 0, false
	}
	return f, true
}

// usageParts are the bracketed usage items, as argparse formats them.
func usageParts() []string {
	var parts []string
	for _, a := range actions {
		if a.hidden {
			continue
		}
		p := a.strings[0]
		if len(a.metavar) > 0 {
			p += " " + strings.Join(a.metavar, " ")
		}
		parts = append(parts, "["+p+"]")
	}
	return parts
}

// Usage is argparse's usage message for the tool, wrapped at 78 columns
// as argparse wraps it on an 80-column terminal, ending in a newline.
func Usage() string {
	const prefix = "usage: "
	const width = 78
	parts := usageParts()
	one := prefix + Prog + " " + strings.Join(parts, " ")
	if len(one) <= width {
		return one + "\n"
	}
	indent := strings.Repeat(" ", len(prefix)+len(Prog)+1)
	var lines []string
	var line []string
	lineLen := len(prefix) - 1
	for _, p := range append([]string{Prog}, parts...) {
		if lineLen+1+len(p) > width && len(line) > 0 {
			lines = append(lines, indent+strings.Join(line, " "))
			line = nil
			lineLen = len(indent) - 1
		}
		line = append(line, p)
		lineLen += len(p) + 1
	}
	if len(line) > 0 {
		lines = append(lines, indent+strings.Join(line, " "))
	}
	lines[0] = lines[0][len(indent):]
	return prefix + strings.Join(lines, "\n") + "\n"
}

// Help is the -h/--help text.
func Help() string {
	var b strings.Builder
	b.WriteString(Usage())
	b.WriteString("\nQuery the episode index (index.jsonl) of this memory.\n\noptions:\n")
	for _, a := range actions {
		if a.hidden {
			continue
		}
		var forms []string
		for _, s := range a.strings {
			f := s
			if len(a.metavar) > 0 {
				f += " " + strings.Join(a.metavar, " ")
			}
			forms = append(forms, f)
		}
		inv := strings.Join(forms, ", ")
		if len(inv) <= 20 {
			fmt.Fprintf(&b, "  %-22s%s\n", inv, a.help)
		} else {
			fmt.Fprintf(&b, "  %s\n%s%s\n", inv, strings.Repeat(" ", 24), a.help)
		}
	}
	return b.String()
}
