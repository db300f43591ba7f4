package episodes

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrLocked is returned (wrapped) when another writer holds a store.
var ErrLocked = errors.New("store is locked by another writer")

// HeldError is TryLock's error when another process holds the lock.
type HeldError struct {
	Path   string // the lock file
	Holder string // its holder line ("pid 123 since …"), or "unknown process"
}

func (e *HeldError) Error() string { return e.Path + " is held by " + e.Holder }

// FileLock is an exclusive flock(2) on a lock file whose content names
// the holder ("pid N since T"). The kernel drops it when the holder dies,
// so a kill -9 never leaves a stale lock.
type FileLock struct{ f *os.File }

// TryLock takes the lock at path without waiting. If another process
// holds it, the error is a *HeldError naming the holder.
func TryLock(path string) (*FileLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			who := strings.TrimSpace(string(holder))
			if who == "" {
				who = "unknown process"
			}
			return nil, &HeldError{Path: path, Holder: who}
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte("pid "+strconv.Itoa(os.Getpid())+" since "+time.Now().UTC().Format(time.RFC3339)+"\n"), 0)
	return &FileLock{f: f}, nil
}

// Unlock releases the lock (nil-safe, idempotent).
func (l *FileLock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	_ = l.f.Truncate(0)
	err := l.f.Close() // closing drops the flock
	l.f = nil
	return err
}

// lockStore takes the store's writer lock, .mfm/writer.lock.
func lockStore(s *Store) (*FileLock, error) {
	path, err := s.MetaPath("writer.lock")
	if err != nil {
		return nil, err
	}
	l, err := TryLock(path)
	var held *HeldError
	if errors.As(err, &held) {
		return nil, fmt.Errorf("%w: %s is held by %s; stop that writer first", ErrLocked, s.Root, held.Holder)
	}
	return l, err
}
