package play

import (
	"fmt"
	"math"

	"github.com/mfm-project/mfm/harness"
)

// governor is the paper's runner guard: an entry that finished repeats
// times in a row at the same spot changing nothing (no event, no
// inventory change, no real movement or turn) is noted, and a further
// identical proposal there is refused before it spends steps.
type governor struct {
	key   string
	at    harness.State
	count int
	limit int
}

// sameSpot: within a block and 5 degrees of view.
func sameSpot(a, b harness.State) bool {
	return math.Hypot(a.X-b.X, a.Z-b.Z) < 1 && math.Abs(a.Y-b.Y) < 1 && math.Abs(angle(a.Yaw-b.Yaw)) < 5 && math.Abs(a.Pitch-b.Pitch) < 5
}

func angle(d float64) float64 {
	d = math.Mod(d, 360)
	if d > 180 {
		d -= 360
	} else if d < -180 {
		d += 360
	}
	return d
}

// changedNothing reports whether an entry's effect is nil: same spot,
// same inventory, no events, health unchanged.
func changedNothing(before, after harness.State, events int) bool {
	if events > 0 || !sameSpot(before, after) || before.Health != after.Health {
		return false
	}
	if len(before.Inventory) != len(after.Inventory) {
		return false
	}
	for k, v := range before.Inventory {
		if after.Inventory[k] != v {
			return false
		}
	}
	return true
}

// refuses reports whether running key now would be refused.
func (g *governor) refuses(key string, now harness.State) bool {
	return g.limit > 0 && g.count >= g.limit && key == g.key && sameSpot(g.at, now)
}

// observe counts a finished entry.
func (g *governor) observe(key string, before, after harness.State, rec EntryRecord, limit int, b *blockBuilder) {
	g.limit = limit
	nothing := rec.Outcome != "error" && changedNothing(before, after, len(rec.Events))
	switch {
	case !nothing:
		g.key, g.count = "", 0
		return
	case key == g.key && sameSpot(g.at, after):
		g.count++
	default:
		g.key, g.count = key, 1
	}
	g.at = after
	if g.count >= limit {
		b.notes = append(b.notes, fmt.Sprintf("governor: %s finished %d times in a row here changing nothing; the same entry here will be refused -- try something else", key, g.count))
	}
}
