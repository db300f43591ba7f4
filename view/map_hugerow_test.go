package view

import (
	"context"
	"strings"
	"testing"

	"github.com/mfm-project/mfm/episodes"
)

// TestMapSkipsHugeRow: an index.jsonl row longer than episodes.MaxRowBytes
// is skipped unread and does not count towards the bytes a map reads, so
// one huge row does not disable every map; the episodes around it are
// still drawn.
func TestMapSkipsHugeRow(t *testing.T) {
	lim := DefaultLimits()
	lim.MaxGridBytes = 4096
	huge := `{"id": "ep_000009", "x": 5.5, "y": 0.0, "z": 5.5, "note": "` + strings.Repeat("n", episodes.MaxRowBytes) + "\"}\n"
	index := handIndex + huge + `{"id": "ep_000010", "x": 0.5, "y": 0.0, "z": 1.5, "first_step": 13, "last_step": 14}` + "\n"
	v, _ := frameStore(t, map[string][]byte{"grid.jsonl": []byte(handGrid), "index.jsonl": []byte(index)}, lim)
	for range 2 { // the second read follows the file from where the first stopped
		b, ok, err := v.View(context.Background(), "map/at=0,0.txt")
		if err != nil || !ok {
			t.Fatalf("map with a huge row in index.jsonl: ok=%v err=%v", ok, err)
		}
		if !strings.Contains(string(b), "ep_000010") || strings.Contains(string(b), "ep_000009") {
			t.Errorf("map lists:\n%s", b)
		}
	}
	// The rows a map holds stay bounded: past the limit, the map is refused.
	v, _ = frameStore(t, map[string][]byte{"grid.jsonl": []byte(handGrid), "index.jsonl": []byte(strings.Repeat(handIndex, 40))}, lim)
	if _, _, err := v.View(context.Background(), "map/at=0,0.txt"); err == nil || !strings.Contains(err.Error(), "more than the 4096 a map reads") {
		t.Errorf("rows over the limit: %v", err)
	}
}
