package episodes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// MarshalPy encodes v the way the paper's harness writes JSON: Python's
// json.dumps(v, sort_keys=True) — keys sorted, ", " and ": " separators,
// non-ASCII escaped as \uXXXX, floats in Python's repr form (69.0,
// 3182.699999988079, 1e+16). v is first passed through encoding/json, so any
// value encoding/json accepts works; json.Number and float64 keep their form.
func MarshalPy(v any) ([]byte, error) {
	return marshalPy(v, -1)
}

// MarshalPyIndent is MarshalPy with json.dumps(indent=1, sort_keys=True)
// layout, as the harness writes action.json, outcome.json and state.json.
func MarshalPyIndent(v any) ([]byte, error) {
	return marshalPy(v, 1)
}

func marshalPy(v any, indent int) ([]byte, error) {
	tree, err := toTree(v)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := writePy(&b, tree, indent, 0); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// toTree turns v into the generic encoding/json tree, keeping numbers as
// json.Number so integers stay integers and floats keep their float-ness.
func toTree(v any) (any, error) {
	raw, ok := v.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(v); err != nil {
			return nil, fmt.Errorf("encode JSON: %w", err)
		}
		if f, isFloat := v.(float64); isFloat {
			// Keep 1.0 a float: encoding/json writes it as "1".
			return pyFloat(f), nil
		}
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var tree any
	if err := d.Decode(&tree); err != nil {
		return nil, fmt.Errorf("decode JSON: %w", err)
	}
	return restoreFloats(v, tree), nil
}

// pyFloat marks a number that must print as a Python float.
type pyFloat float64

// restoreFloats walks the original value next to its decoded tree so that
// float64 values which encoding/json printed without a fraction (1.0 -> "1")
// are written back as floats. Only plain maps, slices and float64 leaves are
// tracked; struct fields that must print as floats should be float64 in a
// map or carry a fraction.
func restoreFloats(orig any, tree any) any {
	switch o := orig.(type) {
	case float64:
		return pyFloat(o)
	case float32:
		return pyFloat(float64(o))
	case map[string]any:
		if t, ok := tree.(map[string]any); ok {
			for k, ov := range o {
				if tv, ok := t[k]; ok {
					t[k] = restoreFloats(ov, tv)
				}
			}
		}
	case []any:
		if t, ok := tree.([]any); ok && len(t) == len(o) {
			for i := range o {
				t[i] = restoreFloats(o[i], t[i])
			}
		}
	case map[string]float64:
		if t, ok := tree.(map[string]any); ok {
			for k, ov := range o {
				t[k] = pyFloat(ov)
			}
		}
	case []float64:
		if t, ok := tree.([]any); ok && len(t) == len(o) {
			for i := range o {
				t[i] = pyFloat(o[i])
			}
		}
	}
	return tree
}

func writePy(b *bytes.Buffer, v any, indent, depth int) error {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case json.Number:
		s := string(x)
		if bytes.ContainsAny([]byte(s), ".eE") {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return fmt.Errorf("number %q: %w", s, err)
			}
			b.WriteString(FormatPyFloat(f))
		} else {
			b.WriteString(s)
		}
	case pyFloat:
		b.WriteString(FormatPyFloat(float64(x)))
	case string:
		writePyString(b, x)
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
				if indent < 0 {
					b.WriteByte(' ')
				}
			}
			newline(b, indent, depth+1)
			if err := writePy(b, e, indent, depth+1); err != nil {
				return err
			}
		}
		newline(b, indent, depth)
		b.WriteByte(']')
	case map[string]any:
		if len(x) == 0 {
			b.WriteString("{}")
			return nil
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys) // Python sorts by code point; Go compares UTF-8 bytes, which orders the same.
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
				if indent < 0 {
					b.WriteByte(' ')
				}
			}
			newline(b, indent, depth+1)
			writePyString(b, k)
			b.WriteString(": ")
			if err := writePy(b, x[k], indent, depth+1); err != nil {
				return err
			}
		}
		newline(b, indent, depth)
		b.WriteByte('}')
	default:
		return fmt.Errorf("unexpected JSON value %T", v)
	}
	return nil
}

func newline(b *bytes.Buffer, indent, depth int) {
	if indent < 0 {
		return
	}
	b.WriteByte('\n')
	for i := 0; i < indent*depth; i++ {
		b.WriteByte(' ')
	}
}

// FormatPyFloat formats f like Python's repr(float): the shortest digits
// that round-trip, fixed notation for exponents in [-4, 16), a trailing ".0"
// on integral values, scientific notation ("1e+16", "1.5e-05") otherwise.
func FormatPyFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	if f == 0 {
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	exp := int(math.Floor(math.Log10(math.Abs(f))))
	// Log10 can be off by one near powers of ten; the 'e' form is exact.
	e := strconv.FormatFloat(f, 'e', -1, 64)
	if i := bytes.IndexByte([]byte(e), 'e'); i >= 0 {
		if n, err := strconv.Atoi(e[i+1:]); err == nil {
			exp = n
		}
	}
	if exp < -4 || exp >= 16 {
		return e
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !bytes.ContainsAny([]byte(s), ".") {
		s += ".0"
	}
	return s
}

func writePyString(b *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r < 0x20 || r > 0x7e && r != 0x7f {
				if r == utf8.RuneError {
					r = 0xfffd
				}
				units := []uint16{uint16(r)}
				if r > 0xffff {
					r1, r2 := utf16.EncodeRune(r)
					units = []uint16{uint16(r1), uint16(r2)}
				}
				for _, u := range units {
					b.WriteString(`\u`)
					b.WriteByte(hex[u>>12&0xf])
					b.WriteByte(hex[u>>8&0xf])
					b.WriteByte(hex[u>>4&0xf])
					b.WriteByte(hex[u&0xf])
				}
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}
