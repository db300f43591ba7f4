package content

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestErrno(t *testing.T) {
	for _, c := range []struct {
		err  error
		want syscall.Errno
	}{
		{nil, 0},
		{Invalid(errors.New("bad view")), syscall.EINVAL},
		{fmt.Errorf("query: %w", context.DeadlineExceeded), syscall.ETIMEDOUT},
		// An interrupted request must not surface as an I/O error: go-fuse
		// cancels its context when a signal interrupts the caller, and Go
		// programs are interrupted often (runtime preemption signals).
		{fmt.Errorf("query: %w", context.Canceled), syscall.EINTR},
		{fmt.Errorf("open: %w", syscall.ENOSPC), syscall.ENOSPC},
		{fmt.Errorf("stat: %w", os.ErrNotExist), syscall.ENOENT},
		{errors.New("anything else"), syscall.EIO},
	} {
		if got := Errno(c.err); got != c.want {
			t.Errorf("Errno(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestPrintable(t *testing.T) {
	for _, c := range []struct {
		in           string
		keepNewlines bool
		want         string
	}{
		{"tag:stuck last:5", false, "tag:stuck last:5"},
		{"café ü", false, "café ü"},
		{"a\nb", false, `a\nb`},
		{"a\nb", true, "a\nb"},
		{"\x1b[2J\x1b]0;pwned\a", false, `\x1b[2J\x1b]0;pwned\a`},
		{"bad\xff\xfeutf8", true, `bad\xff\xfeutf8`},
		{`back\slash`, false, `back\\slash`},
		{"tab\there\r", false, `tab\there\r`},
		{"line\u2028sep\u00a0nbsp\u200bzw", false, `line\u2028sep\u00a0nbsp\u200bzw`},
		{"\x7f", false, `\x7f`},
	} {
		if got := Printable(c.in, c.keepNewlines); got != c.want {
			t.Errorf("Printable(%q, %v) = %q, want %q", c.in, c.keepNewlines, got, c.want)
		}
	}
}

// TestErrorLogEscapesNames: a name with a newline cannot forge an entry
// of /.errors, and no control byte or invalid UTF-8 reaches a terminal.
func TestErrorLogEscapesNames(t *testing.T) {
	l := NewErrorLog(8)
	forged := "x\n\n2026-01-01T00:00:00Z  /q/forged  [EINVAL]\n  all is well\x1b[31m\xff"
	l.Add("/q/"+forged, Invalid(fmt.Errorf("query: bad term %s: unknown key", forged)))
	out := string(l.Render([]string{"grammar"}))
	if !utf8.ValidString(out) {
		t.Errorf("invalid UTF-8 in .errors:\n%q", out)
	}
	for i, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "2026-01-01") {
			t.Errorf("line %d forged by a name: %q", i, line)
		}
		for _, r := range line {
			if r != '\t' && !unicode.IsPrint(r) {
				t.Errorf("line %d has the unprintable %U: %q", i, r, line)
			}
		}
	}
	if !strings.Contains(out, `/q/x\n\n2026-01-01T00:00:00Z  /q/forged  [EINVAL]\n  all is well\x1b[31m\xff  [EINVAL]`) {
		t.Errorf("the escaped path is not in .errors:\n%s", out)
	}
}
