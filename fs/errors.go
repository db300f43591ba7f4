package fs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
)

// requestError is a failure the agent caused (a malformed query or view
// path, a cap exceeded) with the errno the failing call returns.
type requestError struct {
	errno syscall.Errno
	err   error
}

func (e *requestError) Error() string { return e.err.Error() }
func (e *requestError) Unwrap() error { return e.err }

// invalid marks err as the agent's mistake: the call fails with EINVAL.
func invalid(err error) error { return &requestError{errno: syscall.EINVAL, err: err} }

// errnoOf maps an error to the errno a FUSE call answers with.
func errnoOf(err error) syscall.Errno {
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

// errorLog keeps the latest failed requests for /.errors: a malformed
// query fails its lookup with EINVAL, and the full message (what was
// wrong, what is accepted) is here for the agent to read.
type errorLog struct {
	mu   sync.Mutex
	max  int
	ents []errorEntry // newest last
}

type errorEntry struct {
	time time.Time
	path string
	err  error
}

func newErrorLog(max int) *errorLog { return &errorLog{max: max} }

func (l *errorLog) add(path string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ents = append(l.ents, errorEntry{time: time.Now(), path: path, err: err})
	if len(l.ents) > l.max {
		l.ents = l.ents[len(l.ents)-l.max:]
	}
}

// render formats the log, newest first, followed by the help texts.
func (l *errorLog) render(help []string) []byte {
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
		fmt.Fprintf(&b, "\n%s  %s  [%s]\n  %s\n", e.time.UTC().Format(time.RFC3339), e.path, errnoName(errnoOf(e.err)), indent(e.err.Error()))
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

func newErrorsFile(m *mfs) (gofs.InodeEmbedder, error) {
	return &bytesFile{m: m, kind: "errors", content: func(ctx context.Context) ([]byte, error) {
		return m.errs.render(m.ext.help()), nil
	}}, nil
}
