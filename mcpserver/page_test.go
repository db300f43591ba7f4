package mcpserver

import (
	"bytes"
	"strings"
	"testing"
)

func TestPageLines(t *testing.T) {
	text := "one\ntwo\nthree\nfour"
	tests := []struct {
		start, limit, max int
		want              string
		more, cut, past   bool
	}{
		{1, 2, 100, "one\ntwo\n", true, false, false},
		{3, 5, 100, "three\nfour", false, false, false},
		{4, 1, 100, "four", false, false, false},
		{5, 1, 100, "", false, false, true},
		{1, 10, 9, "one\ntwo\n", true, false, false},
		{3, 1, 3, "thr", true, true, false},
		{4, 1, 2, "fo", false, true, false},
	}
	for _, tc := range tests {
		p, err := pageLines(strings.NewReader(text), int64(len(text)), tc.start, tc.limit, tc.max)
		if err != nil {
			t.Fatal(err)
		}
		if string(p.text) != tc.want || p.more != tc.more || p.cutLine != tc.cut || p.startPast != tc.past {
			t.Errorf("pageLines(start %d, limit %d, max %d) = %q more=%v cut=%v past=%v; want %q more=%v cut=%v past=%v",
				tc.start, tc.limit, tc.max, p.text, p.more, p.cutLine, p.startPast, tc.want, tc.more, tc.cut, tc.past)
		}
	}
	if n, _ := countTextLines(strings.NewReader(text)); n != 4 {
		t.Errorf("countTextLines = %d, want 4", n)
	}
}

// FuzzPageLines checks that paging any text with any caps, following
// the pages' own next line, gives back the whole text (lines cut at the
// byte cap aside), in pages within the caps.
func FuzzPageLines(f *testing.F) {
	f.Add("a\nbb\nccc\n", 2, 4)
	f.Add("no newline at the end", 1, 5)
	f.Add("\n\n\n", 1, 1)
	f.Add("héllo wörld\nünïcode\n", 1, 3)
	f.Fuzz(func(t *testing.T, text string, limit, maxBytes int) {
		if limit < 1 || limit > 50 || maxBytes < 1 || maxBytes > 1<<16 {
			return
		}
		var got bytes.Buffer
		cut := false
		start := 1
		for i := 0; ; i++ {
			if i > len(text)+2 {
				t.Fatalf("paging does not end (start %d)", start)
			}
			p, err := pageLines(strings.NewReader(text), int64(len(text)), start, limit, maxBytes)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.text) > maxBytes || p.lines > limit {
				t.Fatalf("page of %d bytes, %d lines over caps %d, %d", len(p.text), p.lines, maxBytes, limit)
			}
			got.Write(p.text)
			cut = cut || p.cutLine
			if p.cutLine && !bytes.HasSuffix(p.text, []byte("\n")) && p.more {
				got.WriteByte('\n') // the cut line's rest is skipped
			}
			if !p.more {
				break
			}
			if p.lines == 0 {
				t.Fatalf("an empty page says more follows (start %d)", start)
			}
			start += p.lines
		}
		if !cut && got.String() != text {
			t.Fatalf("pages joined = %q, want %q", got.String(), text)
		}
		if n, _ := countTextLines(strings.NewReader(text)); !cut && n != strings.Count(got.String(), "\n")+boolInt(!strings.HasSuffix(text, "\n") && text != "") {
			t.Fatalf("countTextLines = %d for %q", n, text)
		}
	})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
