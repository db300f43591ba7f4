package mcpserver

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sort"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/fs/content"
)

// memoryStats computes the counts the generated README reports, reading
// the store's files whole (the mount keeps running counts instead; a
// README read over MCP is rare enough not to need them).
func memoryStats(s *episodes.Store) (content.Stats, error) {
	var st content.Stats
	indexPath := s.Path(episodes.IndexFileName)
	n, err := countLines(indexPath, nil)
	if err != nil {
		return st, err
	}
	st.Episodes = n
	cells := map[[3]int]struct{}{}
	st.GridKinds = map[string]int{}
	st.GridRows, err = countLines(s.Path(episodes.GridFileName), func(line []byte) {
		g, err := episodes.ParseGridRow(line)
		if err != nil {
			return
		}
		cells[g.Cell] = struct{}{}
		if g.Kind != "" {
			st.GridKinds[g.Kind]++
		}
	})
	if err != nil {
		return st, err
	}
	st.GridCells = len(cells)
	if st.LogLines, err = countLines(s.Path(episodes.LogFileName), nil); err != nil {
		return st, err
	}
	if st.Episodes > 0 {
		stop := errors.New("stop")
		_, err := episodes.ReadRows(indexPath, 0, func(r episodes.Row, _ episodes.Line) error {
			st.First = &r
			return stop
		}, nil)
		if err != nil && !errors.Is(err, stop) {
			return st, fmt.Errorf("read %s: %w", indexPath, err)
		}
	}
	recent, err := episodes.TailRows(indexPath, 0, 200)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return st, err
	}
	st.Recent = recent
	if len(recent) > 0 {
		st.Last = &recent[len(recent)-1]
	}
	for i := len(recent) - 1; i >= 0 && st.FrameExample == ""; i-- {
		if img := recent[i].Image; img != "" {
			if _, err := os.Stat(s.Path(img)); err == nil {
				st.FrameExample = img
			}
		}
	}
	prev, err := s.PreviousLives()
	if err != nil {
		return st, err
	}
	for _, l := range prev {
		n, err := countLines(l.IndexPath(), nil)
		if err != nil {
			return st, err
		}
		st.Previous = append(st.Previous, content.LifeStats{N: l.N, Episodes: n})
	}
	sort.Slice(st.Previous, func(i, j int) bool { return st.Previous[i].N < st.Previous[j].N })
	st.Lives = len(prev) + 1
	_, err1 := os.Stat(s.Path(episodes.NowDir, "state.json"))
	_, err2 := os.Stat(s.Path(episodes.NowDir, "frame.png"))
	st.NowState, st.NowFrame = err1 == nil, err2 == nil
	return st, nil
}

// countLines counts the non-blank complete lines of path (0 when it does
// not exist), calling each on every one when not nil.
func countLines(path string, each func([]byte)) (int, error) {
	n := 0
	_, err := episodes.ScanFile(path, 0, func(l episodes.Line) error {
		if len(bytes.TrimSpace(l.Data)) > 0 {
			n++
			if each != nil {
				each(l.Data)
			}
		}
		return nil
	})
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("count %s: %w", path, err)
	}
	return n, nil
}
