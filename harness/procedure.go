package harness

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Kinds of agent-written scripts in mine/.
const (
	KindProcedure = "procedure" // mine/procedures/NAME.ext
	KindReflex    = "reflex"    // mine/reflexes/NAME.ext
)

// Param is one declared parameter of a procedure.
type Param struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Default is the declared default as written ("4", "True",
	// "\"stone\""); "" when none is declared.
	Default string `json:"default,omitempty"`
}

// Procedure is an agent-written script in mine/procedures/ or
// mine/reflexes/, with what its header declares (docs/PROCEDURES.md):
//
//	"""NAME: one-line description."""        (Python docstring) or
//	# NAME: one-line description               (first comment line)
//	PARAMS = {"x": "screen x 0-640", "n": 4}  (Python; a string is a description, another value a default) or
//	# mfm-param: x=0: screen x 0-640           (any language; =default optional)
//	# mfm-when: health_prev - health >= 3      (reflexes: run only when it holds)
//	# mfm-timeout: 5s                          (at most the runner's timeout)
//	# mfm-disabled: reason                     (kept on disk, refused)
type Procedure struct {
	Name        string            `json:"name"`
	Kind        string            `json:"kind"`
	Path        string            `json:"path"`
	Description string            `json:"description"`
	Params      []Param           `json:"params"`
	When        string            `json:"when,omitempty"`
	Disabled    string            `json:"disabled,omitempty"` // the reason; "" when enabled
	Timeout     time.Duration     `json:"timeout,omitempty"`
	Command     []string          `json:"command"` // how it is started (the file is appended)
	SHA256      string            `json:"sha256"`
	Size        int64             `json:"size"`
	ModTime     time.Time         `json:"mtime"`
	Directives  map[string]string `json:"directives,omitempty"` // every mfm-KEY seen (last value)
}

// IsDisabled reports whether the procedure carries an mfm-disabled line.
func (p *Procedure) IsDisabled() bool { return p.Disabled != "" }

// validName is what a procedure may be called: a file stem without path
// separators or a leading dot.
var validName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.+-]*$`)

// ValidName reports whether name can name a procedure.
func ValidName(name string) bool { return validName.MatchString(name) && !strings.Contains(name, "..") }

// maxHeader is how much of a file is read for its header.
const maxHeader = 64 << 10

var (
	directiveRe = regexp.MustCompile(`^\s*(?:#|//|--|;)\s*mfm-([a-z][a-z0-9_-]*)\s*:?\s*(.*?)\s*$`)
	paramsRe    = regexp.MustCompile(`(?m)^PARAMS\s*=\s*(\{.*\})\s*$`)
	pairRe      = regexp.MustCompile(`["']([A-Za-z_][A-Za-z0-9_]*)["']\s*:\s*["']([^"']*)["']`)
)

// interpreters start a script by its extension when it has no #! line
// (executable or not).
var interpreters = map[string][]string{
	".py":   {"python3"},
	".sh":   {"sh"},
	".bash": {"bash"},
	".js":   {"node"},
	".rb":   {"ruby"},
	".pl":   {"perl"},
	".lua":  {"lua"},
}

// skipFile reports whether a directory entry is not a script: dot files,
// editor backups, documentation, compiled caches.
func skipFile(name string) bool {
	if strings.HasPrefix(name, ".") || strings.HasSuffix(name, "~") || strings.HasPrefix(name, "#") {
		return true
	}
	switch strings.ToLower(filepath.Ext(name)) {
	case ".md", ".txt", ".json", ".pyc", ".swp", ".bak", ".orig", ".tmp":
		return true
	}
	return strings.HasPrefix(strings.ToLower(name), "readme")
}

// stem is a file name without its last extension.
func stem(name string) string { return strings.TrimSuffix(name, filepath.Ext(name)) }

// LoadProcedure reads the script at path and parses its header. kind is
// KindProcedure or KindReflex. The script is opened confined to the
// directory above its own (mine/ for mine/procedures/NAME): a symlink
// leading out of it is refused, not followed (see openScript).
func LoadProcedure(path, kind string) (*Procedure, error) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	dir := filepath.Dir(path)
	f, err := openScript(dir, filepath.Base(path))
	if err != nil {
		return nil, fmt.Errorf("load %s %s: %w", kind, path, err)
	}
	defer f.Close()
	return loadOpened(f, path, kind)
}

// openScript opens the script name of dir (mine/procedures or
// mine/reflexes) through an os.Root of dir's parent, mine/: neither the
// script nor dir may be, or pass through, a symlink that leads out of
// mine/. The daemon reads scripts on an agent's behalf with its own
// rights, so a link to a file the agent cannot read must not make the
// daemon read it.
func openScript(dir, name string) (*os.File, error) {
	root, err := os.OpenRoot(filepath.Dir(dir))
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return root.Open(filepath.Join(filepath.Base(dir), name))
}

// openScriptDir opens dir (mine/procedures or mine/reflexes) through an
// os.Root of its parent, as openScript does.
func openScriptDir(dir string) (*os.File, error) {
	root, err := os.OpenRoot(filepath.Dir(dir))
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return root.Open(filepath.Base(dir))
}

// loadOpened reads a script from f: its header from the first maxHeader
// bytes, its sha256 streamed over the whole file (never held in memory).
func loadOpened(f *os.File, path, kind string) (*Procedure, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("load %s %s: %w", kind, path, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("load %s %s: not a regular file", kind, path)
	}
	head := make([]byte, min(st.Size(), maxHeader))
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("load %s %s: %w", kind, path, err)
	}
	head = head[:n]
	h := sha256.New()
	h.Write(head)
	if _, err := io.CopyBuffer(h, onlyReader{f}, make([]byte, 64<<10)); err != nil {
		return nil, fmt.Errorf("load %s %s: %w", kind, path, err)
	}
	p := &Procedure{
		Name:    stem(filepath.Base(path)),
		Kind:    kind,
		Path:    path,
		SHA256:  hex.EncodeToString(h.Sum(nil)),
		Size:    st.Size(),
		ModTime: st.ModTime().UTC(),
		Params:  []Param{},
	}
	parseHeader(p, head)
	cmd, err := commandFor(path, head, st.Mode())
	if err != nil {
		return nil, fmt.Errorf("load %s %s: %w", kind, p.Name, err)
	}
	p.Command = cmd
	return p, nil
}

// onlyReader hides every method but Read, so io.CopyBuffer uses the given
// buffer rather than the file's WriteTo.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// parseHeader fills description, parameters and directives from the
// first maxHeader bytes of a script.
func parseHeader(p *Procedure, head []byte) {
	sc := bufio.NewScanner(bytes.NewReader(head))
	sc.Buffer(make([]byte, 0, 4096), maxHeader)
	first := true
	for sc.Scan() {
		line := sc.Text()
		if first && strings.HasPrefix(line, "#!") {
			first = false
			continue
		}
		first = false
		if m := directiveRe.FindStringSubmatch(line); m != nil {
			if p.Directives == nil {
				p.Directives = map[string]string{}
			}
			key, val := m[1], m[2]
			p.Directives[key] = val
			switch key {
			case "when":
				p.When = val
			case "disabled":
				p.Disabled = val
				if val == "" {
					p.Disabled = "disabled"
				}
			case "timeout":
				if d, err := time.ParseDuration(val); err == nil && d > 0 {
					p.Timeout = d
				}
			case "param":
				name, desc, _ := strings.Cut(val, ":")
				name, def, _ := strings.Cut(name, "=")
				if n := strings.TrimSpace(name); n != "" {
					p.Params = append(p.Params, Param{Name: n, Description: strings.TrimSpace(desc), Default: strings.TrimSpace(def)})
				}
			}
			continue
		}
		if p.Description != "" {
			continue
		}
		t := strings.TrimSpace(line)
		switch {
		case t == "" || strings.HasPrefix(t, "# -*-") || strings.HasPrefix(t, "# vim:") || t == "set -e" || strings.HasPrefix(t, "set -"):
		case strings.HasPrefix(t, `"""`) || strings.HasPrefix(t, `'''`) || strings.HasPrefix(t, `r"""`):
			q := t[:3]
			if t[0] == 'r' {
				t, q = t[1:], t[1:4]
			}
			body := strings.TrimPrefix(t, q)
			if i := strings.Index(body, q); i >= 0 {
				body = body[:i]
			}
			p.Description = cleanDescription(p.Name, body)
		case strings.HasPrefix(t, "#") || strings.HasPrefix(t, "//") || strings.HasPrefix(t, "--"):
			p.Description = cleanDescription(p.Name, strings.TrimLeft(t, "#/- "))
		}
	}
	if len(p.Params) == 0 {
		if loc := paramsStartRe.FindIndex(head); loc != nil {
			p.Params = parsePyParams(string(head[loc[1]-1:]))
		}
	}
	if len(p.Params) == 0 {
		if m := paramsRe.FindSubmatch(head); m != nil {
			p.Params = parseParams(m[1])
		}
	}
	if p.Params == nil {
		p.Params = []Param{}
	}
}

// parseParams reads a one-line PARAMS dict literal: JSON when it is, else
// the quoted "name": "description" pairs in it.
func parseParams(lit []byte) []Param {
	var m map[string]any
	var out []Param
	if json.Unmarshal(lit, &m) == nil {
		// keep the file's order: find each key's position
		for k, v := range m {
			if validParamName(k) {
				out = append(out, Param{Name: k, Description: strings.Join(strings.Fields(fmt.Sprint(v)), " ")})
			}
		}
		sort.Slice(out, func(i, j int) bool {
			return bytes.Index(lit, []byte(`"`+out[i].Name+`"`)) < bytes.Index(lit, []byte(`"`+out[j].Name+`"`))
		})
		return out
	}
	for _, pm := range pairRe.FindAllSubmatch(lit, -1) {
		out = append(out, Param{Name: string(pm[1]), Description: string(pm[2])})
	}
	return out
}

func cleanDescription(name, s string) string {
	s = strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(s, name+":"); ok {
		s = strings.TrimSpace(rest)
	}
	return s
}

// commandFor decides how a script is started: directly when it is
// executable and has a #! line or is a binary, else by its #! line, else
// by its extension. An executable text file without a #! line cannot be
// exec'd (ENOEXEC, "exec format error"), so like a shell it is run by its
// extension's interpreter, or by sh when the extension is not known.
func commandFor(path string, head []byte, mode fs.FileMode) ([]string, error) {
	if mode&0o111 != 0 {
		if bytes.HasPrefix(head, []byte("#!")) || isBinary(head) {
			return []string{}, nil
		}
		if in, ok := interpreters[strings.ToLower(filepath.Ext(path))]; ok {
			return in, nil
		}
		return []string{"sh"}, nil
	}
	if bytes.HasPrefix(head, []byte("#!")) {
		line, _, _ := bytes.Cut(head[2:], []byte("\n"))
		f := strings.Fields(strings.TrimSpace(string(line)))
		if len(f) > 0 {
			return f, nil
		}
	}
	if in, ok := interpreters[strings.ToLower(filepath.Ext(path))]; ok {
		return in, nil
	}
	return nil, fmt.Errorf("cannot tell how to run %s: make it executable (chmod +x) with a #! line, or use one of the extensions .py .sh .bash .js .rb .pl .lua", filepath.Base(path))
}

// isBinary reports whether a file starting with head is a program the
// kernel runs itself rather than a script: an ELF header, or a NUL byte
// (which no script has) in its first bytes.
func isBinary(head []byte) bool {
	return bytes.HasPrefix(head, []byte("\x7fELF")) || bytes.IndexByte(head, 0) >= 0
}

// LoadError is a script of mine/procedures or mine/reflexes that cannot be
// used: which one (its name and file) and why.
type LoadError struct {
	Name string // the script's name (file name without extension)
	Kind string // KindProcedure or KindReflex
	Path string // the file
	Err  error
}

func (e *LoadError) Error() string { return e.Err.Error() }
func (e *LoadError) Unwrap() error { return e.Err }

// ListProcedures loads every script in dir (mine/procedures or
// mine/reflexes), sorted by name. A missing dir has none. Scripts whose
// header cannot be used are returned in bad, each a *LoadError (the rest
// still load).
func ListProcedures(dir, kind string) (procs []*Procedure, bad []error, err error) {
	ents, err := readScriptDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("list %ss: %w", kind, err)
	}
	seen := map[string]string{}
	for _, e := range ents {
		if e.IsDir() || skipFile(e.Name()) {
			continue
		}
		name := stem(e.Name())
		path := filepath.Join(dir, e.Name())
		if prev, dup := seen[name]; dup {
			bad = append(bad, &LoadError{name, kind, path, fmt.Errorf("%s %s: two files, %s and %s: rename one", kind, name, prev, e.Name())})
			continue
		}
		seen[name] = e.Name()
		p, err := LoadProcedure(path, kind)
		if err != nil {
			bad = append(bad, &LoadError{name, kind, path, err})
			continue
		}
		procs = append(procs, p)
	}
	sort.Slice(procs, func(i, j int) bool { return procs[i].Name < procs[j].Name })
	return procs, bad, nil
}

// readScriptDir lists dir (mine/procedures or mine/reflexes) sorted by
// name, opened confined to mine/ (openScriptDir).
func readScriptDir(dir string) ([]fs.DirEntry, error) {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	d, err := openScriptDir(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	ents, err := d.ReadDir(-1)
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	return ents, err
}

// FindProcedure returns the script named name in dir. A bad name or no
// such script is a *ProcError wrapping ErrNotFound; a script that cannot
// be used (two files with the name, no way to run it) one wrapping
// ErrUnusable; only a directory that cannot be read is another error.
func FindProcedure(dir, name, kind string) (*Procedure, error) {
	if !ValidName(name) {
		return nil, &ProcError{Procedure: name, Reason: ReasonNotFound, Message: fmt.Sprintf("%q is not a procedure name (letters, digits, _ . + -; no slashes)", name)}
	}
	ents, err := readScriptDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("find %s %s: %w", kind, name, err)
	}
	var found []string
	for _, e := range ents {
		if !e.IsDir() && !skipFile(e.Name()) && (stem(e.Name()) == name || e.Name() == name) {
			found = append(found, e.Name())
		}
	}
	switch len(found) {
	case 0:
		return nil, &ProcError{Procedure: name, Reason: ReasonNotFound, Message: fmt.Sprintf("no %s %q in %s", kind, name, dir)}
	case 1:
		p, err := LoadProcedure(filepath.Join(dir, found[0]), kind)
		if err != nil {
			msg := err.Error() // "load procedure NAME: why": the why
			if u := errors.Unwrap(err); u != nil {
				msg = u.Error()
			}
			return nil, &ProcError{Procedure: name, Reason: ReasonUnusable, ExitCode: -1, Message: msg}
		}
		return p, nil
	default:
		return nil, &ProcError{Procedure: name, Reason: ReasonUnusable, ExitCode: -1,
			Message: fmt.Sprintf("ambiguous, several files: %s: rename one", strings.Join(found, ", "))}
	}
}
