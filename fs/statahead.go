package fs

import (
	"os"
	"sync"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"golang.org/x/sys/unix"
)

// Stat-ahead for listings with attributes. A READDIRPLUS of the cached
// mounts makes go-fuse look up each entry it lists, one request (a batch
// of entries) at a time, while the lister waits: on a cold `ls -l` of a
// large episodes/ the daemon's lstat of each entry is a large part of its
// time, all of it in series with the lister (bench/mount.md). Once a
// listing has shown that its lister wants attributes (statAheadAfter
// lookups), a goroutine of its own lists the backing directory again and
// stats the entries in the same order, ahead of the lookups, on the CPU
// the lister and the daemon leave idle while they wait for each other;
// the lookup then takes the stat it finds ready instead of making it.
//
// A stat taken ahead is at most statAheadWindow entries older than its
// lookup (milliseconds), and only entries of the directory being listed
// are taken ahead: a READDIRPLUS answers with attributes as of when the
// daemon read them either way. The goroutine only touches the backing
// directory, never the mount, and stops when the listing is released.

// statAheadAfter is the number of lookups in one listing before
// stat-ahead starts: more than a first READDIRPLUS batch, which the
// kernel sends with attributes even to a lister that does not stat (a
// variable for tests).
var statAheadAfter = 256

// statAheadStarted, when set, is called with each stat-ahead as it
// starts, inside the lookup that starts it (a hook for tests, which wait
// there for the goroutine so that how many lookups it serves does not
// depend on the scheduler).
var statAheadStarted func(*statAhead)

// statAheadWindow bounds the stats kept ahead of the lookups.
const statAheadWindow = 2048

// aheadStat is one entry stated ahead of its lookup.
type aheadStat struct {
	name  string
	st    syscall.Stat_t
	btime syscall.Timespec
}

// statAhead stats the entries of one backing directory in listing order,
// ahead of the lookups that take them (take). Stop it with stop.
type statAhead struct {
	mu      sync.Mutex
	room    *sync.Cond   // signalled when the queue shrinks or stop is called
	queue   []*aheadStat // in listing order, at most statAheadWindow
	stopped bool
	done    chan struct{} // closed when the goroutine has returned
}

// startStatAhead starts stating the entries of the directory dir.
func startStatAhead(dir string) *statAhead {
	s := &statAhead{done: make(chan struct{})}
	s.room = sync.NewCond(&s.mu)
	go s.run(dir)
	return s
}

func (s *statAhead) run(dir string) {
	defer close(s.done)
	f, err := os.Open(dir)
	if err != nil {
		return // the lookups stat for themselves
	}
	defer f.Close()
	sc, err := f.SyscallConn()
	if err != nil {
		return
	}
	for {
		names, err := f.Readdirnames(256)
		for _, name := range names {
			a := &aheadStat{name: name}
			var serr error
			cerr := sc.Control(func(fd uintptr) { serr = statxAt(int(fd), name, &a.st, &a.btime) })
			if cerr != nil || serr != nil {
				continue
			}
			s.mu.Lock()
			for len(s.queue) >= statAheadWindow && !s.stopped {
				s.room.Wait()
			}
			if s.stopped {
				s.mu.Unlock()
				return
			}
			s.queue = append(s.queue, a)
			s.mu.Unlock()
		}
		if err != nil {
			return // io.EOF, or an error the lookups will meet themselves
		}
	}
}

// take returns the stat of name if it was taken ahead, and drops the
// entries queued before it (listed before name, so past the lookups).
func (s *statAhead) take(name string) (*aheadStat, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, a := range s.queue {
		if a.name == name {
			clear(s.queue[:i+1])
			s.queue = s.queue[i+1:]
			s.room.Signal()
			return a, true
		}
	}
	return nil, false
}

// stop ends the stat-ahead and drops what it queued; it does not wait
// for the goroutine (wait on done for that).
func (s *statAhead) stop() {
	s.mu.Lock()
	s.stopped = true
	s.queue = nil
	s.room.Broadcast()
	s.mu.Unlock()
}

// statxAt is lstat of name in the directory dirfd with the birth time,
// as go-fuse's loopback takes it (statx; the inode generation comes from
// the birth time).
func statxAt(dirfd int, name string, st *syscall.Stat_t, btime *syscall.Timespec) error {
	var x unix.Statx_t
	if err := unix.Statx(dirfd, name, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_BASIC_STATS|unix.STATX_BTIME, &x); err != nil {
		return err
	}
	*st = syscall.Stat_t{
		Dev:     unix.Mkdev(x.Dev_major, x.Dev_minor),
		Ino:     x.Ino,
		Nlink:   uint64(x.Nlink),
		Mode:    uint32(x.Mode),
		Uid:     x.Uid,
		Gid:     x.Gid,
		Rdev:    unix.Mkdev(x.Rdev_major, x.Rdev_minor),
		Size:    int64(x.Size),
		Blksize: int64(x.Blksize),
		Blocks:  int64(x.Blocks),
		Atim:    statxTime(x.Atime),
		Mtim:    statxTime(x.Mtime),
		Ctim:    statxTime(x.Ctime),
	}
	*btime = syscall.Timespec{}
	if x.Mask&unix.STATX_BTIME != 0 {
		*btime = statxTime(x.Btime)
	}
	return nil
}

func statxTime(t unix.StatxTimestamp) syscall.Timespec {
	return syscall.Timespec{Sec: t.Sec, Nsec: int64(t.Nsec)}
}

// loopbackID is the identity go-fuse's loopback gives the backing file
// st under root (LoopbackRoot.idFromStat with the generation from the
// birth time), so a node made from a stat taken ahead is the node
// LoopbackNode.Lookup makes. TestStatAheadSameNodes checks the two agree.
func loopbackID(root *gofs.LoopbackRoot, st *syscall.Stat_t, btime *syscall.Timespec) gofs.StableAttr {
	gen := uint64(1)
	if btime.Sec != 0 || btime.Nsec != 0 {
		gen = uint64(btime.Sec)*1e9 + uint64(btime.Nsec)
	}
	swapped := (st.Dev << 32) | (st.Dev >> 32)
	swappedRootDev := (root.Dev << 32) | (root.Dev >> 32)
	return gofs.StableAttr{Mode: st.Mode, Gen: gen, Ino: (swapped ^ swappedRootDev) ^ st.Ino}
}
