package luantiworld

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mfm-project/mfm/harness"
)

// KitItems is a task's start kit (short item name: count) as the game's
// start kit setting takes it (luanti.Config.StartKit): item strings such
// as "default:tree 2", sorted. An empty kit is an empty, non-nil list: the
// player starts with nothing (nil would give the mod's default kit).
func KitItems(kit map[string]int) []string {
	out := make([]string, 0, len(kit))
	for name, n := range kit {
		out = append(out, fmt.Sprintf("%s %d", item(name), n))
	}
	sort.Strings(out)
	return out
}

// CheckKit compares the logged inventory at the start with the kit: it
// must hold exactly the kit (every item, its count, nothing else). The
// error names what differs.
func CheckKit(st harness.State, kit map[string]int) error {
	var diff []string
	for name, n := range kit {
		if got := st.Inventory[short(name)]; got != n {
			diff = append(diff, fmt.Sprintf("%s: %d, want %d", short(name), got, n))
		}
	}
	for name, got := range st.Inventory {
		if _, ok := kit[name]; !ok && got != 0 {
			if _, ok := kit["default:"+name]; !ok {
				diff = append(diff, fmt.Sprintf("%s: %d, not in the kit", name, got))
			}
		}
	}
	if len(diff) > 0 {
		sort.Strings(diff)
		return fmt.Errorf("the game's start inventory is not the task's start kit: %s", strings.Join(diff, "; "))
	}
	return nil
}

// short is the state's item name (default: dropped).
func short(name string) string { return strings.TrimPrefix(name, "default:") }
