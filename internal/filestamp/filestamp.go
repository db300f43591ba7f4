// Package filestamp identifies one version of a file for cache keys.
//
// Size and modification time alone are not enough: the kernel stamps
// times from a clock that ticks every few milliseconds, so two files of
// the same size written in one tick look alike. That happens when a file
// is replaced by rename (now/frame.png after every step) or when a name
// stands for different files over time (now/frame.png is the last
// episode's frame until the harness writes its own). The stamp adds the
// device, the inode and the change time, which differ in both cases. A
// file rewritten in place, with the same size, twice within one tick,
// is still not told apart; nothing short of reading it would.
package filestamp

import (
	"io/fs"
	"strconv"
	"syscall"
)

// Stamp is one version of a file.
type Stamp struct {
	Dev, Ino     uint64
	Size         int64
	Mtime, Ctime int64 // nanoseconds since the epoch
}

// Of returns the stamp of the file fi describes. Without the system's
// stat record (a FileInfo not from the OS) it has only size and mtime.
func Of(fi fs.FileInfo) Stamp {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fromStat(st)
	}
	return Stamp{Size: fi.Size(), Mtime: fi.ModTime().UnixNano()}
}

func fromStat(st *syscall.Stat_t) Stamp {
	return Stamp{Dev: uint64(st.Dev), Ino: st.Ino, Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano()}
}

// Path returns the stamp of the file at path, following symlinks; the
// zero Stamp when it cannot be stat'ed (a missing file is a version too).
// It allocates only the path's C string (no FileInfo): query caches call
// it on every lookup.
func Path(path string) Stamp {
	var st syscall.Stat_t
	if syscall.Stat(path, &st) != nil {
		return Stamp{}
	}
	return fromStat(&st)
}

// String is the stamp as a short key.
func (s Stamp) String() string {
	b := make([]byte, 0, 48)
	b = strconv.AppendUint(b, s.Dev, 36)
	b = append(b, '.')
	b = strconv.AppendUint(b, s.Ino, 36)
	b = append(b, '.')
	b = strconv.AppendInt(b, s.Size, 36)
	b = append(b, '.')
	b = strconv.AppendInt(b, s.Mtime, 36)
	b = append(b, '.')
	b = strconv.AppendInt(b, s.Ctime, 36)
	return string(b)
}
