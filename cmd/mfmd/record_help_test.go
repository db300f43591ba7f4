package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mfm-project/mfm/harness"
)

// TestRecordHelpOps: mfmd record --help documents every op the protocol
// accepts (the list its "unknown op" error gives), each on a line of its
// own, and RECORD.md's request table has a row for each.
func TestRecordHelpOps(t *testing.T) {
	_, err := harness.ParseRequest([]byte(`{"op": "bogus"}`))
	m := regexp.MustCompile(`\(want (.*)\)`).FindStringSubmatch(err.Error())
	if m == nil {
		t.Fatalf("unknown op error %q lists no ops", err)
	}
	ops := strings.FieldsFunc(strings.ReplaceAll(m[1], " or ", ", "), func(r rune) bool { return r == ',' || r == ' ' })
	if !slices.Equal(ops, harness.Ops) || len(ops) != 8 {
		t.Errorf("the unknown op error lists %v, the protocol has %v", ops, harness.Ops)
	}
	doc := mustReadFile(t, "../../docs/RECORD.md")
	for _, op := range ops {
		if !regexp.MustCompile(`(?m)^  ` + op + ` +\S`).MatchString(commands["record"].usage) {
			t.Errorf("mfmd record --help does not document op %q", op)
		}
		if !strings.Contains(doc, "| `"+op+"` |") {
			t.Errorf("docs/RECORD.md has no row for op %q", op)
		}
	}
}

func mustReadFile(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
