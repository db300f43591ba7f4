package index

import (
	"bytes"
	"context"
	"fmt"
	"os"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/index/query"
)

// tailScan answers a last:N query by reading the wanted lives' index.jsonl
// backwards (newest life first) until N rows match: what tail(1) does.
// It beats the index when matches are dense — last:20 alone, or a tag on
// every tenth row — where bleve would sort every match to find the newest.
// It gives up after budget rows (0: no limit) with done false.
func tailScan(ctx context.Context, s *episodes.Store, lives []episodes.Life, q *query.Query, budget int) (hits []Hit, done bool, err error) {
	read := 0
	for i := len(lives) - 1; i >= 0 && len(hits) < q.Last; i-- {
		l := lives[i]
		prefix, err := LifePrefix(s, l)
		if err != nil {
			return nil, false, err
		}
		err = eachLineBackwards(l.IndexPath(), func(line []byte) (bool, error) {
			if err := ctx.Err(); err != nil {
				return false, err
			}
			if budget > 0 && read >= budget {
				return false, nil
			}
			read++
			if len(bytes.TrimSpace(line)) == 0 {
				return true, nil
			}
			r, err := episodes.ParseRow(line)
			if err != nil || !q.Match(&r) {
				return true, nil // malformed rows are skipped, as Scan does
			}
			hits = append(hits, Hit{Life: l.N, Row: r.Raw, Dir: EpisodeDir(prefix, &r)})
			return len(hits) < q.Last, nil
		})
		if err != nil {
			return nil, false, fmt.Errorf("query: life %d: %w", l.N, err)
		}
		if budget > 0 && read >= budget && len(hits) < q.Last {
			return nil, false, nil
		}
	}
	for i, j := 0, len(hits)-1; i < j; i, j = i+1, j-1 {
		hits[i], hits[j] = hits[j], hits[i]
	}
	return hits, true, nil
}

// eachLineBackwards calls fn with the complete lines of path, last first,
// until fn returns false. A missing file has no lines.
func eachLineBackwards(path string, fn func(line []byte) (bool, error)) error {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	end, err := episodes.CompleteSize(f) // a torn tail is not a line yet
	if err != nil {
		return err
	}
	const chunk = 64 << 10
	var carry []byte // the start of a line whose beginning lies in an earlier chunk
	buf := make([]byte, chunk)
	for end > 0 {
		start := max(end-chunk, 0)
		n, err := f.ReadAt(buf[:end-start], start)
		if err != nil && int64(n) != end-start {
			return err
		}
		data := append(buf[:n:n], carry...)
		// data ends with '\n' (or is the unfinished tail of the previous chunk's line)
		for {
			data = bytes.TrimSuffix(data, []byte("\n"))
			i := bytes.LastIndexByte(data, '\n')
			if i < 0 {
				break
			}
			more, err := fn(data[i+1:])
			if err != nil || !more {
				return err
			}
			data = data[:i+1]
		}
		carry = append([]byte(nil), data...)
		end = start
	}
	if len(bytes.TrimSuffix(carry, []byte("\n"))) > 0 {
		_, err := fn(bytes.TrimSuffix(carry, []byte("\n")))
		return err
	}
	return nil
}
