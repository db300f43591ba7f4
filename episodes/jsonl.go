package episodes

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// Appender appends rows to a JSONL (or line-oriented text) file. Each row is
// written with a single write(2) on an O_APPEND descriptor and ends in '\n',
// so a reader sees either the whole row or, after a crash, a torn tail that
// it ignores. Appender is not safe for concurrent use.
type Appender struct {
	f    *os.File
	path string
}

// OpenAppender opens path for appending, creating it if needed, and first
// truncates a torn tail (bytes after the last '\n') left by a crash.
// The caller must hold the store's writer lock.
func OpenAppender(path string) (*Appender, error) {
	if _, err := RepairTornTail(path); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s for append: %w", path, err)
	}
	return &Appender{f: f, path: path}, nil
}

// Append writes row plus '\n' in one write(2). row must not contain '\n'.
func (a *Appender) Append(row []byte) error {
	if bytes.IndexByte(row, '\n') >= 0 {
		return fmt.Errorf("append to %s: row contains a newline", a.path)
	}
	buf := make([]byte, len(row)+1)
	copy(buf, row)
	buf[len(row)] = '\n'
	return a.write(buf)
}

// AppendLines writes text (one or more lines, each ending in '\n') in one
// write(2); used for logs.txt blocks.
func (a *Appender) AppendLines(text []byte) error {
	if len(text) == 0 {
		return nil
	}
	if text[len(text)-1] != '\n' {
		text = append(text[:len(text):len(text)], '\n')
	}
	return a.write(text)
}

func (a *Appender) write(buf []byte) error {
	n, err := a.f.Write(buf)
	if err != nil || n != len(buf) {
		if err == nil {
			err = io.ErrShortWrite
		}
		// A short write (full disk) leaves a torn tail; cut it off now so
		// the file stays row-aligned, then report the failure.
		if n > 0 {
			if st, serr := a.f.Stat(); serr == nil {
				_ = a.f.Truncate(st.Size() - int64(n))
			}
		}
		return fmt.Errorf("append to %s: %w", a.path, err)
	}
	return nil
}

// Sync flushes the file to stable storage.
func (a *Appender) Sync() error {
	if err := a.f.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", a.path, err)
	}
	return nil
}

// Close closes the file.
func (a *Appender) Close() error { return a.f.Close() }

// RepairTornTail truncates path after its last '\n' and reports how many
// bytes it removed. A missing file is not an error.
func RepairTornTail(path string) (int64, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("repair %s: %w", path, err)
	}
	defer f.Close()
	end, err := CompleteSize(f)
	if err != nil {
		return 0, fmt.Errorf("repair %s: %w", path, err)
	}
	st, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("repair %s: %w", path, err)
	}
	torn := st.Size() - end
	if torn == 0 {
		return 0, nil
	}
	if err := f.Truncate(end); err != nil {
		return 0, fmt.Errorf("repair %s: truncate torn tail: %w", path, err)
	}
	return torn, f.Sync()
}

// CompleteSize returns the length of f's prefix that ends in '\n' (the part
// a reader may use), scanning backwards from the end.
func CompleteSize(f *os.File) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return completePrefix(f, st.Size(), backwardsChunk)
}

// MaxRowBytes is the longest row (without its '\n') the store's readers
// that must stay fast and bounded (the cue index, the map) read: a longer
// one is skipped by them and flagged by fsck. The recorder's limits keep
// every row it writes far below it.
const MaxRowBytes = 8 << 20

// Line is one complete line read from a JSONL file.
type Line struct {
	No     int    // 1-based line number within the file (counting from the start offset)
	Offset int64  // byte offset of the line's first byte
	Data   []byte // the line without its '\n'; only valid during the callback
	// Long is the length (without '\n') of a line longer than the scan's
	// limit (ScanLinesMax), which is read past without being held: Data
	// is nil then. 0 for every other line.
	Long int64
}

// ScanLines calls fn for each complete line of r, starting at byte offset
// start (used for numbering offsets only; r must already be positioned). A
// last line without '\n' is a torn tail and is not passed to fn. It returns
// the offset just past the last complete line. fn returning an error stops
// the scan with that error.
func ScanLines(r io.Reader, start int64, fn func(Line) error) (int64, error) {
	return ScanLinesMax(r, start, 0, fn)
}

// ScanLinesMax is ScanLines holding no line longer than maxLen bytes
// (0: no limit): a longer line is read past in pieces and passed to fn
// with Data nil and Long its length, so one huge line costs no memory.
func ScanLinesMax(r io.Reader, start int64, maxLen int, fn func(Line) error) (int64, error) {
	br := bufio.NewReaderSize(r, 256<<10)
	off := start
	no := 0
	tooLong := func(n int64) bool { return maxLen > 0 && n > int64(maxLen)+1 }
	for {
		data, err := br.ReadSlice('\n')
		n := int64(len(data))
		if errors.Is(err, bufio.ErrBufferFull) {
			// A very long line: accumulate it, or only count it past maxLen.
			var long []byte
			if !tooLong(n) {
				long = append([]byte(nil), data...)
			}
			for errors.Is(err, bufio.ErrBufferFull) {
				data, err = br.ReadSlice('\n')
				n += int64(len(data))
				if long != nil {
					if tooLong(n) {
						long = nil
					} else {
						long = append(long, data...)
					}
				}
			}
			data = long
		} else if tooLong(n) {
			data = nil
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return off, nil // torn or empty tail: ignored
			}
			return off, err
		}
		no++
		line := Line{No: no, Offset: off}
		if data == nil {
			line.Long = n - 1
		} else {
			line.Data = data[:len(data)-1]
		}
		if ferr := fn(line); ferr != nil {
			return off, ferr
		}
		off += n
	}
}

// ScanFile scans the complete lines of path from byte offset start. A
// missing file has no lines. It returns the offset past the last complete
// line, which a follower passes as start next time.
func ScanFile(path string, start int64, fn func(Line) error) (int64, error) {
	return ScanFileMax(path, start, 0, fn)
}

// ScanFileMax is ScanFile holding no line longer than maxLen bytes (see
// ScanLinesMax).
func ScanFileMax(path string, start int64, maxLen int, fn func(Line) error) (int64, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return start, nil
	}
	if err != nil {
		return start, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	if start > 0 {
		if _, err := f.Seek(start, io.SeekStart); err != nil {
			return start, fmt.Errorf("read %s: %w", path, err)
		}
	}
	end, err := ScanLinesMax(f, start, maxLen, fn)
	if err != nil {
		return end, fmt.Errorf("read %s: %w", path, err)
	}
	return end, nil
}
