package index

import (
	"bytes"
	"context"
	"fmt"

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
		err = episodes.ScanBackwards(l.IndexPath(), 0, func(_ int64, line []byte) (bool, error) {
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
