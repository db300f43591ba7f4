package episodes

import "testing"

// TestPyQuote compares with what CPython 3.11's repr() prints.
func TestPyQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `''`},
		{"abc", `'abc'`},
		{"it's", `"it's"`},
		{`it's "x"`, `'it\'s "x"'`},
		{`say "hi"`, `'say "hi"'`},
		{`a\b`, `'a\\b'`},
		{"a\nb\tc\rd", `'a\nb\tc\rd'`},
		{"\x00\x1f\x7f", `'\x00\x1f\x7f'`},
		{"\u0080\u009f", `'\x80\x9f'`}, // C1 controls
		{"\u00a0", `'\xa0'`},           // no-break space is not printable
		{"\u00ad", `'\xad'`},           // soft hyphen (Cf)
		{"é ü ß 日本", `'é ü ß 日本'`},
		{"\u200b", `'\u200b'`}, // zero-width space (Cf)
		{"\u2028", `'\u2028'`}, // line separator
		{"\U000e0001", `'\U000e0001'`},
		{"😀", `'😀'`},
	}
	for _, tt := range tests {
		if got := PyQuote(tt.in); got != tt.want {
			t.Errorf("PyQuote(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
