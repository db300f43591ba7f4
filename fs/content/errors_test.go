package content

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"
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
