package view

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"
)

// pool bounds the renders running at once; each render, including its wait
// for a worker, has a deadline.
type pool struct {
	sem     chan struct{}
	timeout time.Duration
}

func newPool(workers int, timeout time.Duration) *pool {
	return &pool{sem: make(chan struct{}, max(workers, 1)), timeout: timeout}
}

// ErrBusy is returned (wrapped) when no worker became free in time.
var ErrBusy = errors.New("renderer busy")

// run runs fn on a worker and returns its result, or an error when the
// context ends or the timeout passes first (fn then finishes in the
// background and frees its worker; it is bounded by the output caps). A
// panic in fn is an error, not a crash.
func (p *pool) run(ctx context.Context, what string, fn func() ([]byte, error)) ([]byte, error) {
	if p.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.timeout)
		defer cancel()
	}
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w: %d renders running, none finished in %v; try again", what, ErrBusy, cap(p.sem), p.timeout)
	}
	type result struct {
		b   []byte
		err error
	}
	ch := make(chan result, 1)
	go func() {
		defer func() { <-p.sem }()
		defer func() {
			if r := recover(); r != nil {
				slog.Error("view: render panicked", "view", what, "panic", r, "stack", string(debug.Stack()))
				ch <- result{nil, fmt.Errorf("%s: internal error while rendering: %v", what, r)}
			}
		}()
		b, err := fn()
		ch <- result{b, err}
	}()
	select {
	case r := <-ch:
		return r.b, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: render did not finish in time: %w", what, ctx.Err())
	}
}
