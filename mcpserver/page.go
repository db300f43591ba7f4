package mcpserver

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"unicode/utf8"
)

// page is one window of a text's lines.
type page struct {
	text      []byte
	start     int  // 1-based number of the first line returned
	lines     int  // lines returned
	more      bool // lines follow the window
	cutLine   bool // the one line returned was longer than the byte cap and is cut
	startPast bool // start lies past the last line
}

// countTextLines counts the lines of r: newline-terminated ones plus a
// last line without a newline.
func countTextLines(r io.Reader) (int, error) {
	buf := make([]byte, 1<<20)
	n, last := 0, byte('\n')
	for {
		k, err := r.Read(buf)
		if k > 0 {
			n += bytes.Count(buf[:k], []byte{'\n'})
			last = buf[k-1]
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, err
		}
	}
	if last != '\n' {
		n++
	}
	return n, nil
}

// pageLines returns up to limit lines of r from line start (1-based),
// at most maxBytes of them. A line longer than maxBytes is returned cut
// when it is the first of the window; otherwise the window ends before
// it.
// size (the text's length, or -1 if unknown) only sizes the buffer.
func pageLines(r io.Reader, size int64, start, limit, maxBytes int) (page, error) {
	buf := 64 << 10
	if size >= 0 && size < int64(buf) {
		buf = max(16, int(size)+1) // bufio's minimum is 16
	}
	br := bufio.NewReaderSize(r, buf)
	p := page{start: start}
	line := 1
	for line < start {
		_, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) {
			p.startPast = true
			return p, nil
		}
		if err != nil {
			return p, err
		}
		line++
	}
	var out []byte
	for p.lines < limit {
		var cur []byte
		over, done := false, false
		for {
			b, err := br.ReadSlice('\n')
			if len(out)+len(cur)+len(b) > maxBytes {
				over = true
				if p.lines == 0 {
					cur = append(cur, b[:max(0, maxBytes-len(out)-len(cur))]...)
				}
			} else {
				cur = append(cur, b...)
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if errors.Is(err, io.EOF) {
				done = true
				break
			}
			if err != nil {
				return p, err
			}
			break
		}
		if len(cur) == 0 && done && !over {
			break
		}
		if over {
			if p.lines == 0 {
				out = trimCutRune(cur)
				p.lines, p.cutLine = 1, true
				if !done {
					_, err := br.Peek(1)
					p.more = err == nil
				}
			} else {
				p.more = true
			}
			p.text = out
			return p, nil
		}
		out = append(out, cur...)
		p.lines++
		if done {
			break
		}
	}
	if p.lines == 0 && start > 1 {
		p.startPast = true
	}
	if _, err := br.Peek(1); err == nil {
		p.more = true
	}
	p.text = out
	return p, nil
}

// trimCutRune drops an incomplete UTF-8 sequence that a byte cap cut at
// the end of b.
func trimCutRune(b []byte) []byte {
	for i := 0; i < utf8.UTFMax && i < len(b); i++ {
		if utf8.Valid(b[:len(b)-i]) {
			return b[:len(b)-i]
		}
	}
	return b
}

// looksBinary reports whether b is not text: a NUL byte or invalid
// UTF-8.
func looksBinary(b []byte) bool {
	return bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(trimCutRune(b))
}
