package harness

import (
	"regexp"
	"strings"
)

// paramsStartRe finds a Python `PARAMS = {` at the start of a line; the
// dict may span lines.
var paramsStartRe = regexp.MustCompile(`(?m)^PARAMS\s*(?::[^=\n]*)?=\s*\{`)

// maxParams bounds how many parameters one header declares.
const maxParams = 64

// parsePyParams reads a Python PARAMS dict literal starting at the `{`
// of src (it may span lines and end anywhere later): each key is a
// parameter; a string value is its description, a number, True, False
// or None its default (kept as written), and a dict value gives both
// ("default", and "description", "doc", "help" or "desc"). It returns
// nil when src holds no well-formed dict.
func parsePyParams(src string) []Param {
	p := &pyParser{src: src}
	v, ok := p.value(0)
	if !ok || v.kind != pyDict {
		return nil
	}
	var out []Param
	for i, k := range v.keys {
		if k.kind != pyString || !validParamName(k.text) || len(out) == maxParams {
			continue
		}
		prm := Param{Name: k.text}
		switch val := v.vals[i]; val.kind {
		case pyString:
			prm.Description = val.text
		case pyScalar:
			prm.Default = val.text
		case pyList:
			prm.Default = strings.Join(strings.Fields(val.text), " ")
		case pyDict:
			for j, dk := range val.keys {
				switch dv := val.vals[j]; {
				case dk.text == "default" && dv.kind == pyString:
					prm.Default = pyQuote(dv.text)
				case dk.text == "default" && dv.kind == pyScalar:
					prm.Default = dv.text
				case dv.kind == pyString && prm.Description == "" && (dk.text == "description" || dk.text == "doc" || dk.text == "help" || dk.text == "desc"):
					prm.Description = dv.text
				}
			}
		}
		out = append(out, prm)
	}
	return out
}

var paramNameRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// validParamName is a Python identifier.
func validParamName(s string) bool { return paramNameRe.MatchString(s) }

// pyQuote writes a string default as Python would show it.
func pyQuote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

type pyKind int

const (
	pyScalar pyKind = iota // number, True, False, None, a name
	pyString
	pyDict
	pyList // list, tuple or set: kept as written, not looked into
)

type pyValue struct {
	kind       pyKind
	text       string // a string's contents, a scalar's or list's source
	keys, vals []pyValue
}

// pyParser reads the small part of Python literal syntax PARAMS dicts
// use: dicts, lists and tuples, strings (single, double, triple quoted,
// with an r/b/u/f prefix), numbers and names, comments.
type pyParser struct {
	src string
	i   int
}

// maxDepth bounds nesting, so a hostile header cannot recurse deeply.
const maxDepth = 8

func (p *pyParser) skip() {
	for p.i < len(p.src) {
		switch c := p.src[p.i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\\':
			p.i++
		case c == '#':
			for p.i < len(p.src) && p.src[p.i] != '\n' {
				p.i++
			}
		default:
			return
		}
	}
}

func (p *pyParser) value(depth int) (pyValue, bool) {
	p.skip()
	if p.i >= len(p.src) || depth > maxDepth {
		return pyValue{}, false
	}
	start := p.i
	switch c := p.src[p.i]; {
	case c == '{':
		return p.dict(depth)
	case c == '[' || c == '(':
		if !p.seq(depth) {
			return pyValue{}, false
		}
		return pyValue{kind: pyList, text: p.src[start:p.i]}, true
	case c == '"' || c == '\'':
		return p.str()
	}
	for p.i < len(p.src) && (isNameByte(p.src[p.i]) || strings.IndexByte("+-.", p.src[p.i]) >= 0) {
		p.i++
	}
	if p.i < len(p.src) && (p.src[p.i] == '"' || p.src[p.i] == '\'') && p.i-start <= 2 && isNameByte(p.src[start]) {
		return p.str() // a prefixed string: r"…", b'…', f"…"
	}
	if p.i == start {
		return pyValue{}, false
	}
	return pyValue{kind: pyScalar, text: p.src[start:p.i]}, true
}

func isNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func (p *pyParser) dict(depth int) (pyValue, bool) {
	p.i++ // {
	v := pyValue{kind: pyDict}
	for {
		p.skip()
		if p.i >= len(p.src) {
			return pyValue{}, false
		}
		if p.src[p.i] == '}' {
			p.i++
			return v, true
		}
		k, ok := p.value(depth + 1)
		if !ok {
			return pyValue{}, false
		}
		p.skip()
		if p.i >= len(p.src) || p.src[p.i] != ':' {
			return pyValue{}, false
		}
		p.i++
		val, ok := p.value(depth + 1)
		if !ok {
			return pyValue{}, false
		}
		v.keys, v.vals = append(v.keys, k), append(v.vals, val)
		p.skip()
		if p.i < len(p.src) && p.src[p.i] == ',' {
			p.i++
		} else if p.i >= len(p.src) || p.src[p.i] != '}' {
			return pyValue{}, false
		}
	}
}

// seq reads a list or tuple, not looking into its items' meaning.
func (p *pyParser) seq(depth int) bool {
	end := byte(']')
	if p.src[p.i] == '(' {
		end = ')'
	}
	p.i++
	for {
		p.skip()
		if p.i >= len(p.src) {
			return false
		}
		if p.src[p.i] == end {
			p.i++
			return true
		}
		if _, ok := p.value(depth + 1); !ok {
			return false
		}
		p.skip()
		if p.i < len(p.src) && p.src[p.i] == ',' {
			p.i++
		}
	}
}

func (p *pyParser) str() (pyValue, bool) {
	q := p.src[p.i : p.i+1]
	if strings.HasPrefix(p.src[p.i:], q+q+q) {
		q = q + q + q
	}
	p.i += len(q)
	var b strings.Builder
	for p.i < len(p.src) {
		if strings.HasPrefix(p.src[p.i:], q) {
			p.i += len(q)
			return pyValue{kind: pyString, text: strings.Join(strings.Fields(b.String()), " ")}, true
		}
		c := p.src[p.i]
		if c == '\n' && len(q) == 1 {
			return pyValue{}, false
		}
		if c == '\\' && p.i+1 < len(p.src) {
			p.i++
			c = p.src[p.i]
		}
		b.WriteByte(c)
		p.i++
	}
	return pyValue{}, false
}
