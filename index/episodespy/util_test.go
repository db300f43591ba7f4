package episodespy

import "strconv"

func strconvItoa(n int) string { return strconv.Itoa(n) }
func strconvF(f float64) string {
	if f == float64(int64(f)) {
		return strconv.FormatFloat(f, 'f', 1, 64)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

func gtoa(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
