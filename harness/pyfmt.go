package harness

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/mfm-project/mfm/episodes"
)

// pyStr formats v as Python's str() does for a call argument: floats in
// repr form (1.0, 3170.5), True/False, None, strings bare, lists and dicts
// in repr form.
func pyStr(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return pyRepr(v)
}

// pyRepr formats v as Python's repr().
func pyRepr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		return pyBool(x)
	case string:
		return episodes.PyQuote(x)
	case float64:
		return episodes.FormatPyFloat(x)
	case float32:
		return episodes.FormatPyFloat(float64(x))
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case json.Number:
		if strings.ContainsAny(string(x), ".eE") {
			if f, err := x.Float64(); err == nil {
				return episodes.FormatPyFloat(f)
			}
		}
		return string(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = pyRepr(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case []string:
		return pyStrList(x)
	case []int:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = strconv.Itoa(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = episodes.PyQuote(k) + ": " + pyRepr(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v)
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// pyIntDict formats an inventory delta as Python prints a dict with
// sorted keys: {'bucket': 1, 'dirt': 7}.
func pyIntDict(m map[string]int) string {
	keys := sortedKeys(m)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = episodes.PyQuote(k) + ": " + strconv.Itoa(m[k])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// pyStrList formats a list of strings as Python does: ['water_1'].
func pyStrList(s []string) string {
	parts := make([]string, len(s))
	for i, x := range s {
		parts[i] = episodes.PyQuote(x)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
