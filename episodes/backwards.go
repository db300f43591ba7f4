package episodes

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// backwardsChunk is how much ScanBackwards reads at a time.
const backwardsChunk = 64 << 10

// ScanBackwards calls fn with the complete lines of the file at path that
// end at or before byte offset end (end ≤ 0 or past the file: the whole
// file), last line first, until fn returns false or an error. A line is
// passed without its '\n', with the offset of its first byte; the slice is
// only valid during the call. A torn tail (bytes after the last '\n') is
// not a line, as for ScanLines. A missing file has no lines. The cost
// depends on the lines read, not on the file's length, so reading the
// newest rows of a long index is cheap.
func ScanBackwards(path string, end int64, fn func(off int64, line []byte) (more bool, err error)) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s backwards: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("read %s backwards: %w", path, err)
	}
	if end <= 0 || end > st.Size() {
		end = st.Size()
	}
	if err := scanBackwards(f, end, backwardsChunk, fn); err != nil {
		return fmt.Errorf("read %s backwards: %w", path, err)
	}
	return nil
}

// scanBackwards is ScanBackwards over r's first end bytes, reading chunk
// bytes at a time.
func scanBackwards(r io.ReaderAt, end int64, chunk int, fn func(int64, []byte) (bool, error)) error {
	end, err := completePrefix(r, end, chunk)
	if err != nil || end == 0 {
		return err
	}
	buf := make([]byte, chunk)
	// pending holds the parts of the line being assembled that earlier
	// reads found, the rightmost first; the line ends at lineEnd (its '\n').
	var pending [][]byte
	lineEnd := end - 1
	for pos := lineEnd; pos > 0; {
		start := max(pos-int64(chunk), 0)
		b := buf[:pos-start]
		if err := readFullAt(r, b, start); err != nil {
			return err
		}
		for {
			i := bytes.LastIndexByte(b, '\n')
			if i < 0 {
				break
			}
			more, err := fn(start+int64(i)+1, joinLine(b[i+1:], pending))
			if err != nil || !more {
				return err
			}
			pending = pending[:0]
			lineEnd = start + int64(i)
			b = b[:i]
		}
		pending = append(pending, append([]byte(nil), b...))
		pos = start
	}
	_, err = fn(0, joinLine(nil, pending))
	return err
}

// joinLine is head followed by the pending parts (stored rightmost first).
func joinLine(head []byte, pending [][]byte) []byte {
	if len(pending) == 0 {
		return head
	}
	n := len(head)
	for _, p := range pending {
		n += len(p)
	}
	line := make([]byte, 0, n)
	line = append(line, head...)
	for i := len(pending) - 1; i >= 0; i-- {
		line = append(line, pending[i]...)
	}
	return line
}

// completePrefix returns the length of r's longest prefix within its
// first end bytes that ends in '\n'.
func completePrefix(r io.ReaderAt, end int64, chunk int) (int64, error) {
	buf := make([]byte, min(int64(chunk), end))
	for end > 0 {
		start := max(end-int64(chunk), 0)
		b := buf[:end-start]
		if err := readFullAt(r, b, start); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			return start + int64(i) + 1, nil
		}
		end = start
	}
	return 0, nil
}

// readFullAt fills b from r at off; a file that shrank under the reader
// is an error.
func readFullAt(r io.ReaderAt, b []byte, off int64) error {
	n, err := r.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// TailRows returns up to n well-formed index rows of the file at path
// that end at or before byte offset end (end ≤ 0: the whole file), oldest
// first; blank and malformed lines are skipped, as ReadRows skips them.
// It reads the file backwards, so the cost does not grow with its length.
func TailRows(path string, end int64, n int) ([]Row, error) {
	if n <= 0 {
		return nil, nil
	}
	var rows []Row
	err := ScanBackwards(path, end, func(_ int64, line []byte) (bool, error) {
		if len(bytes.TrimSpace(line)) == 0 {
			return true, nil
		}
		if r, err := ParseRow(line); err == nil {
			rows = append(rows, r)
		}
		return len(rows) < n, nil
	})
	if err != nil {
		return nil, fmt.Errorf("tail: %w", err)
	}
	for i, j := 0, len(rows)-1; i < j; i, j = i+1, j-1 {
		rows[i], rows[j] = rows[j], rows[i]
	}
	return rows, nil
}
