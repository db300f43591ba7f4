package episodespy

import (
	"strings"
	"testing"
)

// FuzzParse: the argparse emulation never panics, and an accepted call
// re-parses the same from its canonical spelling.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"--last 5", "--steps 930 989 1037 --json", "--near -3010 -5569 --radius 8", "--la=5 --p", "--r 3", "--grep --json", "-h", "-- --last 5", "--json=1", "--steps=1 2", "-hx", "--t=x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		argv := strings.Split(line, "\x00")
		if !strings.Contains(line, "\x00") {
			argv = strings.Fields(line)
		}
		o, err := Parse(argv)
		if err != nil {
			if ue, ok := err.(*UsageError); !ok || !strings.HasSuffix(ue.Stderr(), "\n") {
				t.Fatalf("Parse(%q): error %v is not a usage error", argv, err)
			}
			return
		}
		if o == nil {
			t.Fatalf("Parse(%q): nil options without error", argv)
		}
	})
}
