package episodes

import (
	"fmt"
	"strings"
	"unicode"
)

// PyQuote formats s as Python 3's repr() of a str: single quotes unless s
// contains a single quote and no double quote; backslash, the quote, \n,
// \r and \t escaped; every other character that str.isprintable() rejects
// (control characters C0, DEL and C1, format characters, separators other
// than the space, unassigned code points) escaped as \xNN, \uNNNN or
// \UNNNNNNNN. The harness's summaries and the paper tool's messages use
// it, so both print strings exactly as Python does.
func PyQuote(s string) string {
	q := '\''
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		q = '"'
	}
	var b strings.Builder
	b.WriteRune(q)
	for _, r := range s {
		switch {
		case r == '\\' || r == q:
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == ' ' || unicode.IsPrint(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteRune(q)
	return b.String()
}
