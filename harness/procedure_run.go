package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Reasons a procedure call fails; ProcError.Reason is one of them and
// errors.Is(err, ErrXxx) matches it.
const (
	ReasonRefused     = "refused"      // exited non-zero with a message: a precondition failed
	ReasonCrashed     = "crashed"      // exited non-zero with a traceback or a signal
	ReasonTimeout     = "timeout"      // ran past its timeout; it and its descendants were killed
	ReasonOutputLimit = "output-limit" // printed more than the output cap; killed
	ReasonBadOutput   = "bad-output"   // did not print {"actions": [...]} correctly
	ReasonDisabled    = "disabled"     // carries an mfm-disabled line
	ReasonNotFound    = "not-found"    // no such procedure (nor atom)
	ReasonDepth       = "depth"        // nesting deeper than the runner's limit
	ReasonTooMany     = "too-many"     // expansion larger than the runner's item cap
	ReasonStart       = "start"        // the interpreter could not be started
	ReasonUnusable    = "unusable"     // the script cannot be used: no way to run it, two files with its name
)

// Sentinel errors matched by errors.Is on a *ProcError.
var (
	ErrRefused     = errors.New("precondition failed")
	ErrCrashed     = errors.New("procedure crashed")
	ErrTimeout     = errors.New("procedure timed out")
	ErrOutputLimit = errors.New("procedure output over the limit")
	ErrBadOutput   = errors.New("procedure output malformed")
	ErrDisabled    = errors.New("procedure disabled")
	ErrNotFound    = errors.New("no such procedure")
	ErrDepth       = errors.New("procedure nesting too deep")
	ErrTooMany     = errors.New("procedure expansion too large")
	ErrStart       = errors.New("procedure could not start")
	ErrUnusable    = errors.New("procedure unusable")
)

var reasonErr = map[string]error{
	ReasonRefused: ErrRefused, ReasonCrashed: ErrCrashed, ReasonTimeout: ErrTimeout,
	ReasonOutputLimit: ErrOutputLimit, ReasonBadOutput: ErrBadOutput, ReasonDisabled: ErrDisabled,
	ReasonNotFound: ErrNotFound, ReasonDepth: ErrDepth, ReasonTooMany: ErrTooMany, ReasonStart: ErrStart,
	ReasonUnusable: ErrUnusable,
}

// ProcError is a failed procedure call: which procedure (and through which
// chain of callers), why, its message (for a refusal, what it printed to
// stderr — raise SystemExit("…") in Python), its stderr and exit status.
type ProcError struct {
	Procedure string   // the procedure that failed
	Chain     []string // callers, outermost first, ending with Procedure
	Reason    string   // one of the Reason constants
	Message   string   // one line for the agent
	Stderr    string   // the process's stderr (capped)
	ExitCode  int      // -1 when killed or not started
}

func (e *ProcError) Error() string {
	where := e.Procedure
	if len(e.Chain) > 1 {
		where = strings.Join(e.Chain, " > ")
	}
	switch e.Reason {
	case ReasonRefused:
		return fmt.Sprintf("procedure %s refused (precondition failed, exit %d): %s", where, e.ExitCode, e.Message)
	case ReasonCrashed:
		return fmt.Sprintf("procedure %s crashed (exit %d): %s", where, e.ExitCode, e.Message)
	default:
		return fmt.Sprintf("procedure %s: %s: %s", where, e.Reason, e.Message)
	}
}

// Unwrap returns the sentinel for the reason.
func (e *ProcError) Unwrap() error { return reasonErr[e.Reason] }

// Item kinds of an expansion.
const (
	ItemAtom = "atom" // a call of a harness atom: {"procedure"|"atom": NAME, "args": {...}}
	ItemRaw  = "raw"  // a low-level action: {"action": {...}, "repeat": N}
)

// Item is one step of an expanded procedure: an atom call or a raw action
// repeated. From is the chain of procedures that produced it, outermost
// first.
type Item struct {
	Kind   string         `json:"kind"`
	Name   string         `json:"name,omitempty"`
	Args   map[string]any `json:"args,omitempty"`
	Action map[string]any `json:"action,omitempty"`
	Repeat int            `json:"repeat,omitempty"`
	From   []string       `json:"from"`
}

// Entry is the item in the paper's plan-entry form: {"procedure": NAME,
// "args": {...}} or {"action": {...}, "repeat": N}.
func (it Item) Entry() map[string]any {
	if it.Kind == ItemRaw {
		return map[string]any{"action": it.Action, "repeat": it.Repeat}
	}
	args := it.Args
	if args == nil {
		args = map[string]any{}
	}
	return map[string]any{"procedure": it.Name, "args": args}
}

// EntryName is the name reflexes see as "entry": the atom, or "raw".
func (it Item) EntryName() string {
	if it.Kind == ItemRaw {
		return "raw"
	}
	return it.Name
}

// Invocation is one procedure process the runner started. Millis is its
// wall time in milliseconds, from start to exit (action.json "ms").
type Invocation struct {
	Name     string         `json:"name"`
	Args     map[string]any `json:"args"`
	Depth    int            `json:"depth"`
	SHA256   string         `json:"sha256"`
	Millis   int64          `json:"ms"`
	Notes    []string       `json:"notes,omitempty"`
	ExitCode int            `json:"exit"`
}

// Result is a procedure call expanded to atoms and raw actions.
type Result struct {
	Name        string         `json:"name"`
	Args        map[string]any `json:"args"`
	Items       []Item         `json:"actions"`
	Notes       []string       `json:"notes,omitempty"` // "note" fields the procedures printed
	Invocations []Invocation   `json:"invocations"`
	Duration    time.Duration  `json:"-"`
}

// Entries returns the items in plan-entry form, as `mfmd proc run` prints
// them: {"actions": Entries()}.
func (r *Result) Entries() []map[string]any {
	out := make([]map[string]any, len(r.Items))
	for i, it := range r.Items {
		out[i] = it.Entry()
	}
	return out
}

// Runner runs procedures from one directory (mine/procedures/). The zero
// limits take the defaults. A Runner is safe for concurrent use.
type Runner struct {
	Dir       string        // mine/procedures
	Timeout   time.Duration // per process; default 10s
	MaxOutput int           // bytes of stdout per process; default 1 MiB
	MaxStderr int           // bytes of stderr kept; default 64 KiB
	MaxDepth  int           // nesting levels below the called procedure; default 8
	MaxItems  int           // expanded items in all; default 10000
	MaxRepeat int           // repeat of one raw action; default 100000
	// Atoms, when non-nil, lists the harness atoms; a "procedure" item
	// naming neither a script nor an atom is then an error. When nil,
	// every name without a script is taken as an atom.
	Atoms map[string]bool
	// Env is added to the process environment (KEY=VALUE).
	Env    []string
	Logger *slog.Logger
}

func (r *Runner) timeout() time.Duration { return orDur(r.Timeout, 10*time.Second) }
func (r *Runner) maxOutput() int         { return orInt(r.MaxOutput, 1<<20) }
func (r *Runner) maxStderr() int         { return orInt(r.MaxStderr, 64<<10) }
func (r *Runner) maxDepth() int          { return orInt(r.MaxDepth, 8) }
func (r *Runner) maxItems() int          { return orInt(r.MaxItems, 10000) }
func (r *Runner) maxRepeat() int         { return orInt(r.MaxRepeat, 100000) }
func orInt(v, d int) int {
	if v > 0 {
		return v
	}
	return d
}
func orDur(v, d time.Duration) time.Duration {
	if v > 0 {
		return v
	}
	return d
}

func (r *Runner) logger() *slog.Logger {
	if r.Logger != nil {
		return r.Logger
	}
	return slog.Default()
}

// Run calls procedure name with args against state (the state JSON given
// on stdin) and expands its output recursively into atoms and raw
// actions. A failure is a *ProcError.
func (r *Runner) Run(ctx context.Context, name string, args map[string]any, state []byte) (*Result, error) {
	if args == nil {
		args = map[string]any{}
	}
	start := time.Now()
	res := &Result{Name: name, Args: args, Items: []Item{}}
	err := r.expand(ctx, res, name, args, state, nil)
	res.Duration = time.Since(start)
	if err != nil {
		return res, err
	}
	return res, nil
}

// output is what a procedure (or reflex) prints.
type output struct {
	Actions []json.RawMessage `json:"actions"`
	Note    string            `json:"note"`
	Stop    bool              `json:"stop"`
}

func (r *Runner) expand(ctx context.Context, res *Result, name string, args map[string]any, state []byte, chain []string) error {
	chain = append(append([]string(nil), chain...), name)
	if len(chain)-1 > r.maxDepth() {
		return &ProcError{Procedure: name, Chain: chain, Reason: ReasonDepth, ExitCode: -1,
			Message: fmt.Sprintf("nested %d levels deep, over the limit of %d (a procedure calling itself?)", len(chain)-1, r.maxDepth())}
	}
	p, err := FindProcedure(r.Dir, name, KindProcedure)
	if err != nil {
		var pe *ProcError
		if errors.As(err, &pe) {
			pe.Chain = chain
		}
		return err
	}
	out, inv, err := r.exec(ctx, p, args, state, chain)
	inv.Depth = len(chain) - 1
	if err != nil {
		if !errors.Is(err, ErrDisabled) { // a disabled one is never started
			res.Invocations = append(res.Invocations, inv)
		}
		return err
	}
	res.Invocations = append(res.Invocations, inv)
	if out.Note != "" {
		res.Notes = append(res.Notes, name+": "+out.Note)
	}
	if out.Actions == nil {
		return &ProcError{Procedure: name, Chain: chain, Reason: ReasonBadOutput,
			Message: `printed no "actions" list; print {"actions": [...]} or refuse with a message on stderr and a non-zero exit`}
	}
	return r.expandItems(ctx, res, out.Actions, state, chain)
}

// expandItems appends the items of one procedure's (or reflex's) output.
func (r *Runner) expandItems(ctx context.Context, res *Result, actions []json.RawMessage, state []byte, chain []string) error {
	name := chain[len(chain)-1]
	for i, raw := range actions {
		bad := func(format string, a ...any) error {
			return &ProcError{Procedure: name, Chain: chain, Reason: ReasonBadOutput,
				Message: fmt.Sprintf("actions[%d]: ", i) + fmt.Sprintf(format, a...) + ` (want {"procedure": NAME, "args": {...}}, {"atom": NAME, "args": {...}} or {"action": {...}, "repeat": N})`}
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return bad("not a JSON object")
		}
		var args map[string]any
		if a, ok := m["args"]; ok && string(a) != "null" {
			if err := unmarshalNum(a, &args); err != nil {
				return bad("args is not an object")
			}
		}
		if args == nil {
			args = map[string]any{}
		}
		if len(res.Items) >= r.maxItems() {
			return &ProcError{Procedure: name, Chain: chain, Reason: ReasonTooMany, ExitCode: -1,
				Message: fmt.Sprintf("the expansion has more than %d items", r.maxItems())}
		}
		switch {
		case m["procedure"] != nil || m["atom"] != nil:
			key := "procedure"
			if m["atom"] != nil {
				key = "atom"
			}
			var callee string
			if err := json.Unmarshal(m[key], &callee); err != nil || callee == "" {
				return bad("%s is not a name", key)
			}
			if key == "procedure" {
				if _, err := FindProcedure(r.Dir, callee, KindProcedure); err == nil {
					if err := r.expand(ctx, res, callee, args, state, chain); err != nil {
						return err
					}
					continue
				} else if !errors.Is(err, ErrNotFound) {
					var pe *ProcError
					if errors.As(err, &pe) {
						pe.Chain = append(append([]string(nil), chain...), callee)
					}
					return err
				}
				if r.Atoms != nil && !r.Atoms[callee] {
					return &ProcError{Procedure: name, Chain: chain, Reason: ReasonNotFound, ExitCode: -1,
						Message: fmt.Sprintf("actions[%d] calls %q, which is neither a procedure in %s nor an atom", i, callee, r.Dir)}
				}
			}
			res.Items = append(res.Items, Item{Kind: ItemAtom, Name: callee, Args: args, From: chain})
		case m["action"] != nil:
			var act map[string]any
			if err := unmarshalNum(m["action"], &act); err != nil || act == nil {
				return bad("action is not an object")
			}
			n := 1
			if rp, ok := m["repeat"]; ok {
				if err := json.Unmarshal(rp, &n); err != nil {
					return bad("repeat is not an integer")
				}
				if n < 1 || n > r.maxRepeat() {
					return bad("repeat %d is outside 1..%d", n, r.maxRepeat())
				}
			}
			res.Items = append(res.Items, Item{Kind: ItemRaw, Action: act, Repeat: n, From: chain})
		default:
			return bad("no procedure, atom or action key")
		}
	}
	return nil
}

// exec starts one procedure process: state on stdin, --args JSON, in its
// own process group (and PID namespace when allowed); it and every process
// it started are killed when it exits, on timeout, or when its stdout
// passes the cap (procTree).
func (r *Runner) exec(ctx context.Context, p *Procedure, args map[string]any, state []byte, chain []string) (output, Invocation, error) {
	inv := Invocation{Name: p.Name, Args: args, SHA256: p.SHA256, ExitCode: -1}
	fail := func(reason, msg, stderr string, code int) (output, Invocation, error) {
		return output{}, inv, &ProcError{Procedure: p.Name, Chain: chain, Reason: reason, Message: msg, Stderr: stderr, ExitCode: code}
	}
	if p.IsDisabled() {
		return fail(ReasonDisabled, fmt.Sprintf("disabled by its mfm-disabled line (%s); it stays on disk — delete that line to enable it", p.Disabled), "", -1)
	}
	start := time.Now()
	stdout, stderr, code, reason, err := r.spawn(ctx, p, args, state, chain)
	inv.Millis = time.Since(start).Milliseconds()
	inv.ExitCode = code
	if err != nil {
		return fail(reason, err.Error(), stderr, code)
	}
	var out output
	if err := decodeOutput(stdout, &out); err != nil {
		return fail(ReasonBadOutput, err.Error(), stderr, code)
	}
	if out.Note != "" {
		inv.Notes = append(inv.Notes, out.Note)
	}
	return out, inv, nil
}

// drainGrace is how long the pipes are read after a procedure exited and
// its process tree was killed.
const drainGrace = 2 * time.Second

// spawn runs a script and returns its stdout and stderr; a non-nil error
// comes with its Reason.
func (r *Runner) spawn(ctx context.Context, p *Procedure, args map[string]any, state []byte, chain []string) (stdout []byte, stderr string, code int, reason string, err error) {
	argJSON, err := json.Marshal(args)
	if err != nil {
		return nil, "", -1, ReasonBadOutput, fmt.Errorf("arguments are not JSON: %v", err)
	}
	timeout := r.timeout()
	if p.Timeout > 0 && p.Timeout < timeout {
		timeout = p.Timeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	argv := append(append([]string(nil), p.Command...), p.Path, "--args", string(argJSON))
	tree := &procTree{token: newRunToken()}
	env := append(append(os.Environ(),
		"MFM_PROCEDURE="+p.Name,
		"MFM_PROCEDURE_KIND="+p.Kind,
		"MFM_PROCEDURE_DEPTH="+strconv.Itoa(len(chain)-1),
		"MFM_PROCEDURES_DIR="+r.Dir,
		"PYTHONDONTWRITEBYTECODE=1"), r.Env...)
	env = append(env, procRunEnv+"="+tree.token)
	// stdin, stdout and stderr are pipes served here, not by os/exec:
	// Wait then returns when the procedure exits, even if a helper it left
	// behind holds the pipes, and what it printed is kept.
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, "", -1, ReasonStart, fmt.Errorf("start %s: %v", strings.Join(argv[:len(argv)-2], " "), err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, "", -1, ReasonStart, fmt.Errorf("start %s: %v", strings.Join(argv[:len(argv)-2], " "), err)
	}
	defer outR.Close()
	defer errR.Close()
	inR, inW, err := os.Pipe()
	if err != nil {
		outW.Close()
		errW.Close()
		return nil, "", -1, ReasonStart, fmt.Errorf("start %s: %v", strings.Join(argv[:len(argv)-2], " "), err)
	}
	defer inW.Close() // unblocks the state writer if a process outside the tree holds stdin
	out := &capWriter{max: r.maxOutput(), onOver: tree.kill}
	errb := &capWriter{max: r.maxStderr(), keepTail: true}
	build := func() *exec.Cmd {
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Dir = dirOf(p.Path)
		cmd.Env = env
		cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
		cmd.Cancel = func() error { tree.kill(); return nil }
		return cmd
	}
	err = tree.start(build)
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		return nil, "", -1, ReasonStart, fmt.Errorf("start %s: %v", strings.Join(argv[:len(argv)-2], " "), err)
	}
	go func() {
		_, _ = inW.Write(state) // a procedure need not read its state
		inW.Close()
	}()
	var readers sync.WaitGroup
	readers.Go(func() { _, _ = io.Copy(out, outR) })
	readers.Go(func() { _, _ = io.Copy(errb, errR) })
	cmd := tree.cmd
	werr := cmd.Wait()
	ctxErr := ctx.Err() // the drain below must not turn a finished run into a timeout
	tree.kill()         // leave no stray process behind
	drained := make(chan struct{})
	go func() { readers.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(drainGrace):
		// a process outside the tree still holds a pipe: keep what came
		outR.Close()
		errR.Close()
		<-drained
	}
	stderr = errb.String()
	code = -1
	if cmd.ProcessState != nil {
		code = cmd.ProcessState.ExitCode()
	}
	switch {
	case out.over:
		return nil, stderr, -1, ReasonOutputLimit, fmt.Errorf("printed more than %d bytes on stdout; killed", r.maxOutput())
	case errors.Is(ctxErr, context.DeadlineExceeded):
		return nil, stderr, -1, ReasonTimeout, fmt.Errorf("still running after %s; it and every process it started were killed", timeout)
	case ctxErr != nil:
		return nil, stderr, -1, ReasonTimeout, fmt.Errorf("cancelled: %v", ctxErr)
	case werr != nil && code > 0:
		msg := refusalMessage(stderr)
		if isCrash(stderr) {
			return nil, stderr, code, ReasonCrashed, errors.New(msg)
		}
		if msg == "" {
			msg = "exited with status " + strconv.Itoa(code) + " and printed nothing on stderr"
		}
		return nil, stderr, code, ReasonRefused, errors.New(msg)
	case werr != nil:
		return nil, stderr, code, ReasonCrashed, fmt.Errorf("%v %s", werr, refusalMessage(stderr))
	}
	return out.Bytes(), stderr, code, "", nil
}

func dirOf(path string) string {
	if i := strings.LastIndexByte(path, '/'); i > 0 {
		return path[:i]
	}
	return "."
}

// refusalMessage is the part of stderr worth showing in one line: the
// last non-empty line (Python's SystemExit message, a traceback's
// exception line, a shell's echo >&2), cut to 500 bytes.
func refusalMessage(stderr string) string {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if t := strings.TrimSpace(lines[i]); t != "" {
			if len(t) > 500 {
				t = t[:500] + "..."
			}
			return t
		}
	}
	return ""
}

// isCrash tells an unexpected failure (a traceback) from a refusal.
func isCrash(stderr string) bool {
	return strings.Contains(stderr, "Traceback (most recent call last)") || strings.Contains(stderr, "panic: ")
}

// decodeOutput reads a procedure's stdout: one JSON object; if the whole
// is not one, the last non-empty line is tried (debug prints above it are
// tolerated).
func decodeOutput(b []byte, out *output) error {
	t := bytes.TrimSpace(b)
	if len(t) == 0 {
		return errors.New(`printed nothing on stdout; print {"actions": [...]} or refuse with a message on stderr and a non-zero exit`)
	}
	err := json.Unmarshal(t, out)
	if err == nil {
		return nil
	}
	if i := bytes.LastIndexByte(t, '\n'); i >= 0 {
		if json.Unmarshal(bytes.TrimSpace(t[i+1:]), out) == nil {
			return nil
		}
	}
	show := t
	if len(show) > 200 {
		show = append(show[:200:200], "..."...)
	}
	return fmt.Errorf("stdout is not a JSON object (%v): %q", err, show)
}

// capWriter keeps at most max bytes; past that it calls onOver once (the
// head) or keeps the tail (keepTail).
type capWriter struct {
	mu       sync.Mutex
	buf      []byte
	max      int
	over     bool
	keepTail bool
	onOver   func()
}

func (w *capWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.keepTail {
		w.buf = append(w.buf, p...)
		if len(w.buf) > w.max {
			w.buf = append([]byte(nil), w.buf[len(w.buf)-w.max:]...)
			w.over = true
		}
		return len(p), nil
	}
	if w.over {
		return len(p), nil
	}
	if len(w.buf)+len(p) > w.max {
		w.over = true
		if w.onOver != nil {
			w.onOver()
		}
		return len(p), nil
	}
	w.buf = append(w.buf, p...)
	return len(p), nil
}

func (w *capWriter) Bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf
}

func (w *capWriter) String() string { return string(w.Bytes()) }

// unmarshalNum decodes keeping numbers as json.Number, so an expansion
// prints numbers exactly as the procedure did (0.0 stays 0.0).
func unmarshalNum(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}
