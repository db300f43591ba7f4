package episodes

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type offLine struct {
	off  int64
	data string
}

// forwardLines is the reference: the complete lines of data[:end] read
// forwards with ScanLines, last first.
func forwardLines(t testing.TB, data []byte, end int64) []offLine {
	var out []offLine
	if _, err := ScanLines(bytes.NewReader(data[:end]), 0, func(l Line) error {
		out = append(out, offLine{l.Offset, string(l.Data)})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

func backwardLines(t testing.TB, data []byte, end int64, chunk, stopAfter int) []offLine {
	var out []offLine
	err := scanBackwards(bytes.NewReader(data), end, chunk, func(off int64, b []byte) (bool, error) {
		out = append(out, offLine{off, string(b)})
		return stopAfter <= 0 || len(out) < stopAfter, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameLines(a, b []offLine) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func writeTemp(t testing.TB, data []byte) string {
	p := filepath.Join(t.TempDir(), "index.jsonl")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestScanBackwardsCases covers the shapes a JSONL file takes: empty,
// torn tail, no trailing newline, blank lines, a line longer than the
// read chunk, and an end offset inside a line.
func TestScanBackwardsCases(t *testing.T) {
	huge := strings.Repeat("x", 3*backwardsChunk+17)
	cases := []struct {
		name string
		data string
		end  int64
		want []offLine
	}{
		{"empty", "", 0, nil},
		{"only a torn tail", "abc", 0, nil},
		{"one line", "abc\n", 0, []offLine{{0, "abc"}}},
		{"torn tail ignored", "a\nbc\nde", 0, []offLine{{2, "bc"}, {0, "a"}}},
		{"blank lines kept", "\n\na\n", 0, []offLine{{2, "a"}, {1, ""}, {0, ""}}},
		{"end inside a line", "a\nbc\nde\n", 4, []offLine{{0, "a"}}},
		{"end on a line boundary", "a\nbc\nde\n", 5, []offLine{{2, "bc"}, {0, "a"}}},
		{"end past the file", "a\n", 99, []offLine{{0, "a"}}},
		{"huge line", "a\n" + huge + "\nb\n", 0, []offLine{{int64(3 + len(huge)), "b"}, {2, huge}, {0, "a"}}},
		{"huge first line", huge + "\n", 0, []offLine{{0, huge}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := writeTemp(t, []byte(c.data))
			var got []offLine
			if err := ScanBackwards(p, c.end, func(off int64, b []byte) (bool, error) {
				got = append(got, offLine{off, string(b)})
				return true, nil
			}); err != nil {
				t.Fatal(err)
			}
			if !sameLines(got, c.want) {
				t.Fatalf("got %d lines %.80v, want %d %.80v", len(got), got, len(c.want), c.want)
			}
		})
	}
}

func TestScanBackwardsMissingFileAndStop(t *testing.T) {
	calls := 0
	if err := ScanBackwards(filepath.Join(t.TempDir(), "none.jsonl"), 0, func(int64, []byte) (bool, error) { calls++; return true, nil }); err != nil || calls != 0 {
		t.Fatalf("missing file: err %v, %d calls", err, calls)
	}
	p := writeTemp(t, []byte("1\n2\n3\n4\n"))
	var got []string
	if err := ScanBackwards(p, 0, func(_ int64, b []byte) (bool, error) { got = append(got, string(b)); return len(got) < 2, nil }); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "4,3" {
		t.Fatalf("stopped after %v, want 4,3", got)
	}
	stop := fmt.Errorf("stop")
	if err := ScanBackwards(p, 0, func(int64, []byte) (bool, error) { return true, stop }); err == nil || !strings.Contains(err.Error(), "stop") {
		t.Fatalf("fn's error not returned: %v", err)
	}
}

// FuzzScanBackwards checks the backwards reader against forward reading:
// the same lines at the same offsets, in reverse, for any content, end
// offset and read chunk size (small chunks make every line "huge").
func FuzzScanBackwards(f *testing.F) {
	f.Add([]byte("a\nbc\n"), int64(0), uint8(0))
	f.Add([]byte("a\nbc\nd"), int64(4), uint8(1))
	f.Add([]byte(""), int64(0), uint8(5))
	f.Add([]byte("\n\n\n"), int64(2), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, end int64, chunk uint8) {
		if end <= 0 || end > int64(len(data)) {
			end = int64(len(data))
		}
		want := forwardLines(t, data, end)
		got := backwardLines(t, data, end, int(chunk)+1, 0)
		if !sameLines(got, want) {
			t.Fatalf("chunk %d: backwards %+v, forwards reversed %+v", int(chunk)+1, got, want)
		}
		if len(want) > 1 {
			stopped := backwardLines(t, data, end, int(chunk)+1, len(want)/2)
			if !sameLines(stopped, want[:len(want)/2]) {
				t.Fatalf("stopped early: %+v, want %+v", stopped, want[:len(want)/2])
			}
		}
	})
}

// TestTailRows compares TailRows with the last rows ReadRows reads
// forwards, for every n and every end offset on a line boundary.
func TestTailRows(t *testing.T) {
	var b bytes.Buffer
	for i := range 7 {
		fmt.Fprintf(&b, `{"id": "ep_%06d", "path": "episodes/ep_%06d"}`+"\n", i, i)
		if i == 2 {
			b.WriteString("not json\n\n")
		}
	}
	b.WriteString(`{"id": "ep_torn"`)
	p := writeTemp(t, b.Bytes())
	var ends []int64
	if _, err := ScanFile(p, 0, func(l Line) error { ends = append(ends, l.Offset+int64(len(l.Data))+1); return nil }); err != nil {
		t.Fatal(err)
	}
	for _, end := range append(ends, 0) {
		var all []Row
		limit := end
		if limit == 0 {
			limit = int64(b.Len())
		}
		if _, err := ReadRows(p, 0, func(r Row, l Line) error {
			if l.Offset+int64(len(l.Data)) < limit {
				all = append(all, r)
			}
			return nil
		}, nil); err != nil {
			t.Fatal(err)
		}
		for n := 0; n <= 9; n++ {
			got, err := TailRows(p, end, n)
			if err != nil {
				t.Fatal(err)
			}
			want := all[max(len(all)-n, 0):]
			if len(got) != len(want) {
				t.Fatalf("end %d n %d: %d rows, want %d", end, n, len(got), len(want))
			}
			for i := range got {
				if got[i].ID != want[i].ID || !bytes.Equal(got[i].Raw, want[i].Raw) {
					t.Fatalf("end %d n %d: row %d is %s, want %s", end, n, i, got[i].ID, want[i].ID)
				}
			}
		}
	}
}

// TestScanBackwardsLongFile: lines come out last first, whole, across 64 KB
// chunk boundaries, with empty lines and a line longer than a chunk, and
// without the torn tail.
func TestScanBackwardsLongFile(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	var lines []string
	var b strings.Builder
	for i := 0; i < 5000; i++ {
		n := rng.IntN(200)
		switch i {
		case 17:
			n = 0
		case 2500:
			n = 200 << 10 // longer than a chunk
		}
		l := fmt.Sprintf("%d:%s", i, strings.Repeat("x", n))
		if i == 18 {
			l = ""
		}
		lines = append(lines, l)
		b.WriteString(l + "\n")
	}
	b.WriteString("torn tail")
	p := filepath.Join(t.TempDir(), "f")
	os.WriteFile(p, []byte(b.String()), 0o644)
	var got []string
	if err := ScanBackwards(p, 0, func(_ int64, l []byte) (bool, error) { got = append(got, string(l)); return true, nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(lines) {
		t.Fatalf("%d lines, want %d", len(got), len(lines))
	}
	for i := range got {
		if got[i] != lines[len(lines)-1-i] {
			t.Fatalf("line %d from the end: %.40q, want %.40q", i, got[i], lines[len(lines)-1-i])
		}
	}
	n := 0
	ScanBackwards(p, 0, func(int64, []byte) (bool, error) { n++; return n < 3, nil })
	if n != 3 {
		t.Errorf("stopping after 3 lines read %d", n)
	}
}
