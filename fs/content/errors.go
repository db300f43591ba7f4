package content

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"
)

// requestError is a failure the agent caused (a malformed query or view
// path, a cap exceeded) with the errno the failing call returns.
type requestError struct {
	errno syscall.Errno
	err   error
}

func (e *requestError) Error() string { return e.err.Error() }
func (e *requestError) Unwrap() error { return e.err }

// Invalid marks err as the agent's mistake: the call fails with EINVAL.
func Invalid(err error) error { return &requestError{errno: syscall.EINVAL, err: err} }

// NameTooLong marks err as a name longer than a limit: the call fails
// with ENAMETOOLONG.
func NameTooLong(err error) error { return &requestError{errno: syscall.ENAMETOOLONG, err: err} }

// Errno maps an error to the errno a filesystem call answers with: EINVAL
// for Invalid, ETIMEDOUT for a deadline, EINTR for a cancelled request,
// the errno err wraps, ENOENT for a missing file, else EIO.
func Errno(err error) syscall.Errno {
	var re *requestError
	var en syscall.Errno
	switch {
	case err == nil:
		return 0
	case errors.As(err, &re):
		return re.errno
	case errors.Is(err, context.DeadlineExceeded):
		return syscall.ETIMEDOUT
	case errors.Is(err, context.Canceled):
		// The kernel interrupted the request (a signal reached the caller,
		// e.g. the Go runtime's preemption signal): EINTR makes the kernel
		// restart the call or the caller retry it; EIO would be an error.
		return syscall.EINTR
	case errors.As(err, &en):
		return en
	case errors.Is(err, os.ErrNotExist):
		return syscall.ENOENT
	}
	return syscall.EIO
}

// ErrorLog keeps the latest failed requests for /.errors: a malformed
// query fails its lookup with EINVAL, and the full message (what was
// wrong, what is accepted) is here for the agent to read. Its methods are
// safe for concurrent use.
type ErrorLog struct {
	mu   sync.Mutex
	max  int
	ents []errorEntry // newest last
}

type errorEntry struct {
	time time.Time
	path string
	err  error
}

// NewErrorLog returns an empty log that keeps the latest max failures.
func NewErrorLog(max int) *ErrorLog { return &ErrorLog{max: max} }

// Add records that the request on path (in the mount) failed with err.
func (l *ErrorLog) Add(path string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ents = append(l.ents, errorEntry{time: time.Now(), path: path, err: err})
	if len(l.ents) > l.max {
		l.ents = l.ents[len(l.ents)-l.max:]
	}
}

// Render formats the log, newest first, followed by the help texts.
func (l *ErrorLog) Render(help []string) []byte {
	l.mu.Lock()
	ents := append([]errorEntry(nil), l.ents...)
	l.mu.Unlock()
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Latest failed requests on this mount (newest first, at most %d)\n", l.max)
	if len(ents) == 0 {
		b.WriteString("\n(no errors since the mount started)\n")
	}
	for i := len(ents) - 1; i >= 0; i-- {
		e := ents[i]
		fmt.Fprintf(&b, "\n%s  %s  [%s]\n  %s\n", e.time.UTC().Format(time.RFC3339), Printable(e.path, false), errnoName(Errno(e.err)), indent(Printable(e.err.Error(), true)))
	}
	for _, h := range help {
		b.WriteString("\n")
		b.WriteString(h)
		if len(h) > 0 && h[len(h)-1] != '\n' {
			b.WriteString("\n")
		}
	}
	return b.Bytes()
}

// Printable escapes s for a terminal, so that a name the agent chose
// (a query, a view) cannot forge lines of /.errors or send escape
// sequences: a backslash becomes \\, control characters and other
// unprintable runes \n, \t, \xNN or \uNNNN, and each byte of invalid
// UTF-8 \xNN. With keepNewlines, newlines stay (a message's own line
// breaks, which Render indents).
func Printable(s string, keepNewlines bool) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || r == '\\' || !unicode.IsPrint(r) && !(keepNewlines && r == '\n') {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n' && keepNewlines:
			b.WriteByte('\n')
		case unicode.IsPrint(r):
			b.WriteString(s[i : i+n])
		default:
			q := strconv.QuoteRune(r) // '\n', '\x1b', '\u2028'
			b.WriteString(q[1 : len(q)-1])
		}
		i += n
	}
	return b.String()
}

func indent(s string) string {
	return string(bytes.ReplaceAll(bytes.TrimRight([]byte(s), "\n"), []byte("\n"), []byte("\n  ")))
}

func errnoName(e syscall.Errno) string {
	switch e {
	case syscall.EINVAL:
		return "EINVAL"
	case syscall.ETIMEDOUT:
		return "ETIMEDOUT"
	case syscall.ENOENT:
		return "ENOENT"
	case syscall.E2BIG:
		return "E2BIG"
	case syscall.ENAMETOOLONG:
		return "ENAMETOOLONG"
	}
	return e.Error()
}
