// Package fanotify reports the opens of regular files on one mount
// (fanotify(7) with a mount mark and FAN_OPEN, through raw system calls).
// The MFM mount uses it for the access log of episodes/ and previous/ as
// root, whose opens never reach the daemon; it is safe to use on a FUSE
// mount served by the watching process itself (see Watch).
package fanotify

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ErrUnavailable is wrapped by WatchOpens' error when the kernel
// has no fanotify or the process lacks CAP_SYS_ADMIN (needed for
// FAN_CLASS_NOTIF with file descriptors and for mount marks).
var ErrUnavailable = errors.New("fanotify unavailable (needs CAP_SYS_ADMIN and a kernel with fanotify)")

// bufSize is the read buffer of the watcher: room for about
// 2,700 event records (24 bytes each) per read(2). Each record read
// carries a new open descriptor, so a read can add that many fds to the
// process for the time it takes to walk the buffer.
const bufSize = 64 << 10

// deletedSuffix is what readlink of /proc/self/fd/N appends to the path
// of an unlinked file.
const deletedSuffix = " (deleted)"

// Watch reports the opens of regular files on one mount (fanotify, a
// mount mark, FAN_OPEN). It is not in the data path: the kernel queues
// an event after each successful open and the watcher reads the queue
// from a goroutine of its own, so an open never waits for it. Directory
// opens are not reported (no FAN_ONDIR: listings are logged by the
// mount's OPENDIR/READDIR handlers). Opens by this process itself (the
// daemon) are skipped.
//
// FUSE: each event comes with a descriptor of the opened file, created
// by the kernel inside this process's read(2) of the fanotify fd, and
// closed by the watcher right after readlink. On a FUSE mount served by
// this same process, creating that descriptor may send OPEN (unless the
// connection is in no-open mode) and closing it may send FLUSH and
// RELEASE to the server, i.e. to other goroutines of this process; the
// watcher's goroutine waits in the kernel until they answer. So the
// watcher never holds a lock while it reads or closes descriptors (it
// holds none at all), blocks nothing but its own goroutine, and onOpen
// must neither hold locks that FUSE handlers need across calls nor wait
// for anything the watcher itself would have to do (it must not call
// Close). A child forked while the watcher holds an event descriptor
// inherits it until its execve, whose close-on-exec then sends one more
// FLUSH (from the child; vfork has already let the parent go by then).
// Close the watcher before stopping the FUSE server: a close(2)
// of an event fd on a mount whose server no longer answers (but whose
// connection is not aborted) would hang.
type Watch struct {
	mnt    string            // mount point as readlink reports paths under it (symlinks of its parents resolved)
	paths  map[string]string // with FixedNames: path by file handle (only the watcher's goroutine uses it)
	fd     int               // fanotify fd (non-blocking)
	stopFd int               // eventfd written by Close to wake the poll
	procFd int               // /proc/self/fd, for readlinkat of event descriptors; -1 if it did not open
	self   int32             // our pid: events of the daemon itself are skipped
	log    *slog.Logger
	onOpen func(path string, pid int32)

	stopping  atomic.Bool
	overflow  atomic.Int64 // FAN_Q_OVERFLOW events seen
	pathHits  atomic.Int64 // paths found by file handle (FixedNames)
	done      chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// Options tune a Watch.
type Options struct {
	// Log receives warnings; nil means slog.Default().
	Log *slog.Logger
	// FixedNames says no file on the mount ever gets another name (a
	// read-only mount whose server only invalidates entries, never
	// moves them; a name may still come to name another file), so the
	// path of an open file is a fact of its inode: the path readlink
	// gives for it stays the same while the inode lives (also once the
	// name is gone, see deletedSuffix). The watcher then keeps the
	// paths of the files it saw by their kernel file handle
	// (name_to_handle_at of the event descriptor, which never reaches
	// the file's filesystem server) and reports a file opened again
	// without the readlink (bench/mount.md has what that saves in a
	// scan of frames). Files with more than one link are never
	// kept: each open gets the path of the name it opened.
	FixedNames bool
}

// maxKeptPaths bounds the paths kept by file handle (FixedNames); the
// watcher forgets them all when it is reached (about 100 bytes each).
const maxKeptPaths = 1 << 17

// WatchOpens starts reporting opens on the mount at mnt (an absolute
// mount point) to onOpen, called from the watcher's own goroutine with
// the path inside the mount ("/episodes/ep_000001/state.json"; the
// mount's root is "/") and the opener's pid (its thread group id). It
// needs CAP_SYS_ADMIN; without it the error wraps ErrUnavailable.
// mnt must be a mount point: a mount mark on a plain directory would
// watch the whole filesystem around it. onOpen must not be nil. Stop the
// watcher with Close.
// Two opens of one file by one process that are queued together may be
// merged by the kernel into one event.
func WatchOpens(mnt string, opts Options, onOpen func(path string, pid int32)) (*Watch, error) {
	log := opts.Log
	if log == nil {
		log = slog.Default()
	}
	if onOpen == nil {
		return nil, fmt.Errorf("fanotify %s: nil onOpen", mnt)
	}
	if !filepath.IsAbs(mnt) {
		return nil, fmt.Errorf("fanotify %s: mount point is not an absolute path", mnt)
	}
	mnt = filepath.Clean(mnt)
	// Resolve symlinks of the parents only: they are outside the mount,
	// while a stat of mnt itself would be a request to its filesystem.
	real := mnt
	if mnt != "/" {
		parent, err := filepath.EvalSymlinks(filepath.Dir(mnt))
		if err != nil {
			return nil, fmt.Errorf("fanotify %s: %w", mnt, err)
		}
		real = filepath.Join(parent, filepath.Base(mnt))
	}
	ok, err := isMountPoint(real)
	if err != nil {
		return nil, fmt.Errorf("fanotify %s: %w", mnt, err)
	}
	if !ok {
		return nil, fmt.Errorf("fanotify %s: not a mount point", mnt)
	}

	fd, err := initGroup()
	if err != nil {
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOSYS) {
			return nil, fmt.Errorf("fanotify %s: %w: %w", mnt, ErrUnavailable, err)
		}
		return nil, fmt.Errorf("fanotify %s: fanotify_init: %w", mnt, err)
	}
	if err := unix.FanotifyMark(fd, unix.FAN_MARK_ADD|unix.FAN_MARK_MOUNT, unix.FAN_OPEN, unix.AT_FDCWD, real); err != nil {
		unix.Close(fd)
		if errors.Is(err, unix.EPERM) {
			return nil, fmt.Errorf("fanotify %s: %w: mark: %w", mnt, ErrUnavailable, err)
		}
		return nil, fmt.Errorf("fanotify %s: mark: %w", mnt, err)
	}
	stopFd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("fanotify %s: eventfd: %w", mnt, err)
	}
	w := &Watch{
		mnt:    real,
		fd:     fd,
		stopFd: stopFd,
		procFd: -1,
		self:   int32(os.Getpid()),
		log:    log,
		onOpen: onOpen,
		done:   make(chan struct{}),
	}
	if opts.FixedNames {
		w.paths = make(map[string]string)
	}
	if pfd, err := unix.Open("/proc/self/fd", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil {
		w.procFd = pfd
	}
	go w.run()
	return w, nil
}

// initGroup creates the fanotify group: notification class, event
// fds read-only without atime updates, an unlimited queue. A kernel or
// capability set that refuses FAN_UNLIMITED_QUEUE or O_NOATIME gets a
// retry without them.
func initGroup() (int, error) {
	const flags = unix.FAN_CLASS_NOTIF | unix.FAN_CLOEXEC | unix.FAN_NONBLOCK
	const evFlags = unix.O_RDONLY | unix.O_LARGEFILE | unix.O_CLOEXEC
	tries := []struct{ flags, evFlags uint }{
		{flags | unix.FAN_UNLIMITED_QUEUE, evFlags | unix.O_NOATIME},
		{flags, evFlags | unix.O_NOATIME},
		{flags | unix.FAN_UNLIMITED_QUEUE, evFlags},
		{flags, evFlags},
	}
	var first error
	for _, t := range tries {
		fd, err := unix.FanotifyInit(t.flags, t.evFlags)
		if err == nil {
			return fd, nil
		}
		if first == nil {
			first = err
		}
		if err != unix.EPERM && err != unix.EINVAL {
			return -1, err
		}
	}
	return -1, first
}

// isMountPoint reports whether p is the mount point of a mount in this
// process's namespace, from /proc/self/mountinfo (no request to the
// mounted filesystem).
func isMountPoint(p string) (bool, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && unescapeMountinfo(f[4]) == p {
			return true, nil
		}
	}
	return false, nil
}

// unescapeMountinfo decodes the octal escapes (\040 for a space) of a
// mountinfo path.
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Overflows returns the number of queue overflows (FAN_Q_OVERFLOW
// events: the kernel dropped events). With an unlimited queue it stays
// 0 unless the kernel fell back to a bounded one.
func (w *Watch) Overflows() int64 { return w.overflow.Load() }

// PathHits returns the number of opens whose path was found by file
// handle, without a readlink (Options.FixedNames).
func (w *Watch) PathHits() int64 { return w.pathHits.Load() }

// Close stops the watcher and waits for its goroutine, which first
// reports the events already queued (at most 64 reads' worth). After
// Close returns onOpen is not called again. It is idempotent and
// prompt (the goroutine is woken through an eventfd, well under 100 ms),
// unless the goroutine is inside onOpen or a close(2) the FUSE server
// has to answer. It must not be called from onOpen.
func (w *Watch) Close() error {
	w.closeOnce.Do(func() {
		w.stopping.Store(true)
		var one [8]byte
		*(*uint64)(unsafe.Pointer(&one[0])) = 1
		if _, err := unix.Write(w.stopFd, one[:]); err != nil && err != unix.EAGAIN {
			w.closeErr = fmt.Errorf("fanotify %s: stop: %w", w.mnt, err)
			// The goroutine still sees stopping at its next wake-up;
			// don't wait for it then, or Close could hang.
			return
		}
		<-w.done
		err1 := unix.Close(w.fd)
		err2 := unix.Close(w.stopFd)
		if w.procFd >= 0 {
			unix.Close(w.procFd)
		}
		if err := errors.Join(err1, err2); err != nil {
			w.closeErr = fmt.Errorf("fanotify %s: close: %w", w.mnt, err)
		}
	})
	return w.closeErr
}

// run is the watcher's goroutine: poll the fanotify fd and the stop
// eventfd, drain the queue, repeat until Close.
func (w *Watch) run() {
	defer close(w.done)
	buf := make([]byte, bufSize)
	link := make([]byte, unix.PathMax+len(deletedSuffix))
	handle := make([]byte, 0, 64)
	fds := []unix.PollFd{
		{Fd: int32(w.fd), Events: unix.POLLIN},
		{Fd: int32(w.stopFd), Events: unix.POLLIN},
	}
	inOverflow := false
	readErrs := 0
	for !w.stopping.Load() {
		fds[0].Revents, fds[1].Revents = 0, 0
		if _, err := unix.Poll(fds, -1); err != nil {
			if err == unix.EINTR {
				continue
			}
			w.log.Error("fanotify: poll failed; opens are no longer reported", slog.String("mount", w.mnt), slog.Any("err", err))
			return
		}
		if fds[1].Revents != 0 {
			break
		}
		// Drain what is queued.
		if !w.drain(buf, link, handle, &inOverflow, &readErrs, -1) {
			return
		}
		// Let the next burst gather (the stop eventfd still wakes us at
		// once): a scan of many frames then costs a few hundred reads and
		// wake-ups, not one per open (bench/mount.md has the share of the
		// watcher's CPU this saves).
		stop := fds[1:]
		stop[0].Revents = 0
		if _, err := unix.Poll(stop, int(batchWait/time.Millisecond)); err == nil && stop[0].Revents != 0 {
			break
		}
	}
	// Stopping: report what the kernel queued before Close (an unmount
	// right after a burst of opens must not lose their records), within
	// a bound so Close stays prompt while opens keep coming.
	w.drain(buf, link, handle, &inOverflow, &readErrs, 64)
}

// drain reads and handles queued events until the queue is empty (or,
// with max >= 0, after max reads). It returns false if the fanotify
// descriptor is unusable.
func (w *Watch) drain(buf, link, handle []byte, inOverflow *bool, readErrs *int, max int) bool {
	for i := 0; max < 0 || i < max; i++ {
		n, err := unix.Read(w.fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			return true
		}
		if err != nil {
			// The kernel could not create an event's descriptor
			// (EMFILE, or the FUSE server refused the open): that
			// event is lost, the queue goes on.
			*readErrs++
			if *readErrs == 1 || *readErrs%1000 == 0 {
				w.log.Warn("fanotify: read: an open event was lost", slog.String("mount", w.mnt), slog.Any("err", err), slog.Int("errors", *readErrs))
			}
			if err == unix.EBADF || err == unix.EINVAL || err == unix.EFAULT {
				w.log.Error("fanotify: read failed; opens are no longer reported", slog.String("mount", w.mnt), slog.Any("err", err))
				return false
			}
			return true
		}
		if n <= 0 {
			return true
		}
		w.handle(buf[:n], link, handle, inOverflow)
	}
	return true
}

// batchWait is how long the watcher lets events queue after
// draining them.
const batchWait = 10 * time.Millisecond

// handle walks the event records in b: it reports each open and always
// closes its descriptor (before calling onOpen, so no lock onOpen takes
// is held across the close and its FLUSH).
func (w *Watch) handle(b, link, handle []byte, inOverflow *bool) {
	const metaSize = int(unsafe.Sizeof(unix.FanotifyEventMetadata{}))
	for len(b) >= metaSize {
		m := (*unix.FanotifyEventMetadata)(unsafe.Pointer(&b[0]))
		evLen := int(m.Event_len)
		if evLen < metaSize || evLen > len(b) {
			w.log.Error("fanotify: malformed event record; rest of the batch skipped", slog.String("mount", w.mnt), slog.Int("event_len", evLen))
			// Descriptors of the records after it cannot be found
			// safely; they stay open (this should never happen).
			return
		}
		b = b[evLen:]
		if m.Vers != unix.FANOTIFY_METADATA_VERSION {
			if m.Fd >= 0 {
				unix.Close(int(m.Fd))
			}
			w.log.Error("fanotify: unexpected metadata version", slog.String("mount", w.mnt), slog.Int("vers", int(m.Vers)))
			continue
		}
		if m.Mask&unix.FAN_Q_OVERFLOW != 0 || m.Fd == unix.FAN_NOFD {
			if m.Mask&unix.FAN_Q_OVERFLOW != 0 {
				w.overflow.Add(1)
				if !*inOverflow {
					*inOverflow = true
					w.log.Warn("fanotify: event queue overflow; some opens were not reported", slog.String("mount", w.mnt), slog.Int64("overflows", w.overflow.Load()))
				}
			}
			continue
		}
		if m.Fd < 0 {
			continue // FAN_REPORT_FD_ERROR style errors (not requested)
		}
		*inOverflow = false
		if m.Pid == w.self || m.Mask&unix.FAN_OPEN == 0 {
			unix.Close(int(m.Fd))
			continue
		}
		path, ok := w.resolve(int(m.Fd), link, handle)
		unix.Close(int(m.Fd))
		if ok {
			w.onOpen(path, m.Pid)
		}
	}
}

// resolve returns the path inside the mount of the event descriptor fd,
// kept by file handle with FixedNames (see Options).
func (w *Watch) resolve(fd int, link, handle []byte) (string, bool) {
	if w.paths == nil {
		return w.pathOf(fd, link)
	}
	key, keyed := fileHandle(fd, handle)
	if keyed {
		if p, ok := w.paths[string(key)]; ok {
			w.pathHits.Add(1)
			return p, true
		}
	}
	p, ok := w.pathOf(fd, link)
	if ok && keyed && singleLink(fd) {
		if len(w.paths) >= maxKeptPaths {
			clear(w.paths)
		}
		w.paths[string(key)] = p
	}
	return p, ok
}

// fileHandle returns the kernel's file handle of the open file fd (its
// type, then its bytes), appended to buf[:0]; ok is false if the
// filesystem has none. For a FUSE file it is the kernel's node id and
// generation: making it sends the server nothing.
func fileHandle(fd int, buf []byte) ([]byte, bool) {
	h, _, err := unix.NameToHandleAt(fd, "", unix.AT_EMPTY_PATH)
	if err != nil {
		return nil, false
	}
	buf = binary.LittleEndian.AppendUint32(buf[:0], uint32(h.Type()))
	return append(buf, h.Bytes()...), true
}

// singleLink reports whether the open file fd has one link, from the
// attributes the kernel has (AT_STATX_DONT_SYNC: no request to a FUSE
// server, whatever its attribute timeout).
func singleLink(fd int) bool {
	var st unix.Statx_t
	err := unix.Statx(fd, "", unix.AT_EMPTY_PATH|unix.AT_STATX_DONT_SYNC, unix.STATX_NLINK, &st)
	return err == nil && st.Mask&unix.STATX_NLINK != 0 && st.Nlink == 1
}

// pathOf returns the path inside the mount of the event descriptor fd
// ("/" for the mount's root); ok is false if it is not under the mount.
// readlink of /proc/self/fd/N does not reach the file's filesystem.
func (w *Watch) pathOf(fd int, link []byte) (string, bool) {
	var n int
	var err error
	if w.procFd >= 0 {
		// Relative to an open /proc/self/fd: no walk of /proc per event.
		n, err = unix.Readlinkat(w.procFd, strconv.Itoa(fd), link)
	} else {
		n, err = unix.Readlink("/proc/self/fd/"+strconv.Itoa(fd), link)
	}
	if err != nil || n <= 0 {
		return "", false
	}
	p := string(link[:n])
	p = strings.TrimSuffix(p, deletedSuffix)
	switch {
	case w.mnt == "/":
		return p, strings.HasPrefix(p, "/")
	case p == w.mnt:
		return "/", true
	case strings.HasPrefix(p, w.mnt) && p[len(w.mnt)] == '/':
		return p[len(w.mnt):], true
	}
	return "", false
}

// Available reports whether this process may watch opens: nil,
// or an error wrapping ErrUnavailable.
func Available() error {
	fd, err := initGroup()
	if err != nil {
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOSYS) {
			return fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		return fmt.Errorf("fanotify: %w", err)
	}
	unix.Close(fd)
	return nil
}
