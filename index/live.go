package index

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/index/query"
)

// Default retry bounds of a Live searcher while another process holds
// the cue index.
const (
	DefaultRetryMin = time.Second
	DefaultRetryMax = 30 * time.Second
)

// LiveOptions configure OpenLive.
type LiveOptions struct {
	Options // passed to Open; Options.Logger also receives Live's own messages
	// RetryMin and RetryMax bound the wait before Open is tried again
	// while another process holds the index: the first wait is RetryMin,
	// each next one twice the last, at most RetryMax. Zero means
	// DefaultRetryMin and DefaultRetryMax.
	RetryMin, RetryMax time.Duration
	// Poll is the interval of Watch's polling; 0 is its default.
	Poll time.Duration
}

// Live is the Searcher of a long-running process (a mount). It answers
// by Scan at once, and by the store's cue index as soon as Open succeeds
// (the first build of a large store takes a while), keeping the index up
// to date with Watch until Close. While another process holds the index
// (mfmd q, a second mount: perhaps only for a moment) it scans and tries
// again, waiting longer each time; when the index cannot be used for any
// other reason it scans for good, with a warning. Either way its answers
// are Scan's.
type Live struct {
	sw     searchSwitch
	cancel context.CancelFunc
	done   chan struct{}
	ready  chan struct{}
	close  sync.Once
}

// OpenLive starts serving store s's queries; Close stops it and releases
// the index.
func OpenLive(s *episodes.Store, opt LiveOptions) *Live {
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	if opt.RetryMin <= 0 {
		opt.RetryMin = DefaultRetryMin
	}
	if opt.RetryMax <= 0 {
		opt.RetryMax = DefaultRetryMax
	}
	ctx, cancel := context.WithCancel(context.Background())
	l := &Live{sw: searchSwitch{Fallback: Scan{Store: s}}, cancel: cancel, done: make(chan struct{}), ready: make(chan struct{})}
	go func() {
		defer close(l.done)
		x := openRetrying(ctx, s, opt)
		if x == nil {
			return
		}
		defer x.Close()
		l.sw.Set(x)
		close(l.ready)
		x.Watch(ctx, opt.Poll)
		l.sw.Set(Scan{Store: s}) // x closes below; late queries scan
	}()
	return l
}

// openRetrying opens s's index, trying again while another process holds
// it. It returns nil when ctx ends first or the index cannot be used.
func openRetrying(ctx context.Context, s *episodes.Store, opt LiveOptions) *Index {
	log := opt.Logger
	for wait := opt.RetryMin; ; wait = min(2*wait, opt.RetryMax) {
		x, st, err := Open(ctx, s, opt.Options)
		if ctx.Err() != nil {
			if err == nil {
				x.Close()
			}
			return nil // closing
		}
		if err == nil {
			log.Info("cue index ready", "docs", st.Docs, "indexed", st.Indexed, "rebuilt", st.Rebuilt, "reason", st.Reason, "took", st.Took)
			return x
		}
		if !errors.Is(err, ErrBusy) {
			log.Warn("cue index unavailable; queries scan index.jsonl", "err", err)
			return nil
		}
		log.Info("cue index busy; queries scan index.jsonl until it is free", "err", err, "retry_in", wait)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// Search implements Searcher.
func (l *Live) Search(ctx context.Context, q *query.Query) ([]Hit, error) {
	return l.sw.Search(ctx, q)
}

// Ready is closed once the cue index answers; it stays open while l
// scans (the index busy, unusable, or l closed before it opened).
func (l *Live) Ready() <-chan struct{} { return l.ready }

// Close stops the watcher or the retries and releases the index; later
// queries are answered by Scan. It waits for nothing but a batch being
// indexed, and is safe to call more than once.
func (l *Live) Close() error {
	l.close.Do(func() {
		l.cancel()
		<-l.done
	})
	return nil
}

// OpenOrScan opens store s's cue index for a one-shot search (Open: it
// is built or brought up to date first). When the index cannot be used —
// another process owns it (ErrBusy), or the store is not writable — it
// returns Scan, which gives the same answers, and why (nil when the
// index answers). release closes whatever was opened.
func OpenOrScan(ctx context.Context, s *episodes.Store, opt Options) (sr Searcher, release func(), why error) {
	x, _, err := Open(ctx, s, opt)
	if err != nil {
		return Scan{Store: s}, func() {}, err
	}
	return x, func() { x.Close() }, nil
}

// searchSwitch is a Searcher that answers with Fallback until Set gives
// it another, so Live can serve queries by Scan while its cue index is
// still being opened or built.
type searchSwitch struct {
	Fallback Searcher
	cur      atomic.Pointer[Searcher]
}

// Set makes s answer from now on.
func (w *searchSwitch) Set(s Searcher) { w.cur.Store(&s) }

// Search implements Searcher.
func (w *searchSwitch) Search(ctx context.Context, q *query.Query) ([]Hit, error) {
	if s := w.cur.Load(); s != nil {
		return (*s).Search(ctx, q)
	}
	return w.Fallback.Search(ctx, q)
}
