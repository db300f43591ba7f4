package index

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/index/query"
)

// logRecords is a slog.Handler that sends every record's message and
// retry_in attribute to a channel, so a test can wait for one.
type logRecords chan logRecord

type logRecord struct {
	msg   string
	retry time.Duration
}

func (h logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (h logRecords) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h logRecords) WithGroup(string) slog.Handler            { return h }
func (h logRecords) Handle(_ context.Context, r slog.Record) error {
	rec := logRecord{msg: r.Message}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "retry_in" {
			rec.retry = a.Value.Duration()
		}
		return true
	})
	select {
	case h <- rec:
	default: // the test stopped listening
	}
	return nil
}

// holdCueLock takes store s's cue-index lock as another process would.
func holdCueLock(t *testing.T, s *episodes.Store) *episodes.FileLock {
	t.Helper()
	p, err := s.MetaPath("cue.lock")
	if err != nil {
		t.Fatal(err)
	}
	l, err := episodes.TryLock(p)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// cueLockHeld reports whether someone (an open Index) holds s's cue lock.
func cueLockHeld(t *testing.T, s *episodes.Store) bool {
	t.Helper()
	p, _ := s.MetaPath("cue.lock")
	l, err := episodes.TryLock(p)
	var held *episodes.HeldError
	if errors.As(err, &held) {
		return true
	}
	if err != nil {
		t.Fatal(err)
	}
	l.Unlock()
	return false
}

func waitReady(t *testing.T, l *Live) {
	t.Helper()
	select {
	case <-l.Ready():
	case <-time.After(30 * time.Second):
		t.Fatal("the cue index never became ready")
	}
}

// TestLiveBusyThenFree: while another process holds the index, a Live
// searcher answers as Scan does and tries again, each wait twice the last
// up to RetryMax; once the lock is free it opens the index, holds it, and
// answers from it (a row appended since is found); Close releases it and
// later queries still get Scan's answers.
func TestLiveBusyThenFree(t *testing.T) {
	s := genStore(t, 300)
	hold := holdCueLock(t, s)
	logs := make(logRecords, 64)
	l := OpenLive(s, LiveOptions{Options: Options{Logger: slog.New(logs)}, RetryMin: 5 * time.Millisecond, RetryMax: 20 * time.Millisecond})
	defer l.Close()

	q, _ := query.Parse("tag:stuck life:all")
	want, err := Scan{Store: s}.Search(context.Background(), q)
	if err != nil || len(want) == 0 {
		t.Fatalf("scan: %d hits, %v", len(want), err)
	}
	got, err := l.Search(context.Background(), q)
	if err != nil || !reflect.DeepEqual(hitKeys(got), hitKeys(want)) {
		t.Fatalf("while busy: %d hits (%v), scan %d", len(got), err, len(want))
	}
	var waits []time.Duration
	for len(waits) < 4 {
		select {
		case r := <-logs:
			if r.retry > 0 {
				waits = append(waits, r.retry)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("retries logged: %v, want 4", waits)
		}
	}
	if w := []time.Duration{5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond}; !reflect.DeepEqual(waits, w) {
		t.Errorf("retry waits %v, want %v", waits, w)
	}
	select {
	case <-l.Ready():
		t.Fatal("ready while another process holds the index")
	default:
	}

	hold.Unlock()
	waitReady(t, l)
	if !cueLockHeld(t, s) {
		t.Error("the ready index does not hold the lock")
	}
	appendLine(t, s, `ed", "tags": ["stuck"]}`+"\n") // completes genStore's torn tail
	before := len(want)
	want, _ = Scan{Store: s}.Search(context.Background(), q)
	if len(want) != before+1 {
		t.Fatalf("the appended row: scan finds %d rows, want %d", len(want), before+1)
	}
	got, err = l.Search(context.Background(), q)
	if err != nil || !reflect.DeepEqual(hitKeys(got), hitKeys(want)) {
		t.Fatalf("from the index: %d hits (%v), scan %d", len(got), err, len(want))
	}

	l.Close()
	if cueLockHeld(t, s) {
		t.Error("Close left the index locked")
	}
	got, err = l.Search(context.Background(), q)
	if err != nil || !reflect.DeepEqual(hitKeys(got), hitKeys(want)) {
		t.Fatalf("after Close: %d hits (%v), scan %d", len(got), err, len(want))
	}
	l.Close() // a second Close is harmless
}

// TestLiveCloseWhileWaiting: Close during a long retry wait returns at
// once and never opens the index.
func TestLiveCloseWhileWaiting(t *testing.T) {
	s := genStore(t, 30)
	hold := holdCueLock(t, s)
	defer hold.Unlock()
	logs := make(logRecords, 8)
	l := OpenLive(s, LiveOptions{Options: Options{Logger: slog.New(logs)}, RetryMin: time.Hour})
	select {
	case r := <-logs: // the first attempt failed: now waiting an hour
		if r.retry != time.Hour {
			t.Fatalf("logged %q retry_in %v, want a wait of 1h", r.msg, r.retry)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no busy message")
	}
	done := make(chan struct{})
	go func() { l.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close waits for the retry")
	}
	select {
	case <-l.Ready():
		t.Error("ready after Close")
	default:
	}
}

// TestLiveUnusable: an index that cannot be opened for another reason than
// a holder (here .mfm/ is a file, so no lock can be made) is not retried:
// queries scan, with one warning, and Close returns.
func TestLiveUnusable(t *testing.T) {
	s := genStore(t, 30)
	if err := os.WriteFile(s.Path(episodes.MetaDir), []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	logs := make(logRecords, 8)
	l := OpenLive(s, LiveOptions{Options: Options{Logger: slog.New(logs)}, RetryMin: time.Millisecond})
	defer l.Close()
	select {
	case r := <-logs:
		if r.msg != "cue index unavailable; queries scan index.jsonl" {
			t.Errorf("logged %q", r.msg)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no warning")
	}
	l.Close()
	if len(logs) != 0 {
		t.Errorf("%d more messages after giving up (retried?)", len(logs))
	}
	q, _ := query.Parse("life:all")
	want, _ := Scan{Store: s}.Search(context.Background(), q)
	if got, err := l.Search(context.Background(), q); err != nil || len(got) != len(want) || len(want) == 0 {
		t.Errorf("unusable index: %d hits (%v), scan %d", len(got), err, len(want))
	}
}

// TestOpenOrScan: a one-shot search uses the index when it is free, and
// Scan, saying why, when another process holds it.
func TestOpenOrScan(t *testing.T) {
	s := genStore(t, 30)
	sr, release, why := OpenOrScan(context.Background(), s, quiet)
	if _, ok := sr.(*Index); !ok || why != nil {
		t.Fatalf("free index: %T, %v", sr, why)
	}
	if !cueLockHeld(t, s) {
		t.Error("the open index does not hold the lock")
	}
	release()
	if cueLockHeld(t, s) {
		t.Error("release left the index locked")
	}

	hold := holdCueLock(t, s)
	defer hold.Unlock()
	sr, release, why = OpenOrScan(context.Background(), s, quiet)
	defer release()
	if _, ok := sr.(Scan); !ok || !errors.Is(why, ErrBusy) {
		t.Fatalf("busy index: %T, %v; want Scan and ErrBusy", sr, why)
	}
}
