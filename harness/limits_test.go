package harness

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mfm-project/mfm/episodes"
)

// TestFramePathOnlyRegularFiles: a frame_path is read only when it names a
// regular file of at most MaxFrameBytes. A fifo (which would block the
// read forever, the writer lock held), a device (/dev/zero: endless
// bytes), a directory or an over-large file is refused at once with an
// error naming what it is; a symlink to a regular PNG is read.
func TestFramePathOnlyRegularFiles(t *testing.T) {
	dir := t.TempDir()
	good := pngBytes(t, 8, 8)
	os.WriteFile(filepath.Join(dir, "good.png"), good, 0o644)
	os.Symlink("good.png", filepath.Join(dir, "link.png"))
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	big, err := os.Create(filepath.Join(dir, "big.png"))
	if err != nil {
		t.Fatal(err)
	}
	big.Truncate(MaxFrameBytes + 1) // sparse
	big.Close()
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)

	cases := []struct{ path, want string }{
		{filepath.Join(dir, "fifo"), "is not a regular file (a fifo)"},
		{"/dev/zero", "is not a regular file (a character device)"},
		{filepath.Join(dir, "sub"), "is not a regular file (a directory)"},
		{filepath.Join(dir, "big.png"), fmt.Sprintf("is %d bytes, more than the %d a frame may be", MaxFrameBytes+1, MaxFrameBytes)},
		{filepath.Join(dir, "missing.png"), "no such file"},
		{filepath.Join(dir, "link.png"), ""},
	}
	lines := []string{`{"op":"begin","call":{"kind":"look"}}`}
	for i, c := range cases {
		lines = append(lines, fmt.Sprintf(`{"op":"step","state":{"step":%d},"frame_path":%q}`, i+1, c.path))
	}
	lines = append(lines, `{"op":"end"}`)

	type result struct {
		s    *episodes.Store
		reps []Reply
	}
	done := make(chan result, 1)
	go func() {
		s, reps, _ := session(t, ServeOptions{}, lines...)
		done <- result{s, reps}
	}()
	var res result
	select {
	case res = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the recorder hangs on a frame_path")
	}
	for i, c := range cases {
		rp := res.reps[i+1]
		if c.want == "" {
			if !rp.OK {
				t.Errorf("%s: refused: %s", c.path, rp.Error)
			}
			continue
		}
		if rp.OK || !strings.Contains(rp.Error, "frame_path: ") || !strings.Contains(rp.Error, c.want) {
			t.Errorf("%s: reply %+v, want an error with %q", c.path, rp, c.want)
		}
	}
	if !res.reps[len(res.reps)-1].OK {
		t.Fatalf("end: %+v", res.reps[len(res.reps)-1])
	}
	if b, _ := os.ReadFile(res.s.Path("episodes/ep_000000/observation/image.png")); !bytes.Equal(b, good) {
		t.Error("the frame behind the symlink was not recorded")
	}
	verifyClean(t, res.s)
}

// TestRequestLimits: every field and line past its documented limit is
// refused with an error naming the field and the limit; nothing of a
// refused line is recorded and the episode can still be saved.
func TestRequestLimits(t *testing.T) {
	rep := strings.Repeat
	list := func(n int, item string) string {
		xs := make([]string, n)
		for i := range xs {
			xs[i] = item
		}
		return "[" + strings.Join(xs, ",") + "]"
	}
	inv := func(n int) string {
		xs := make([]string, n)
		for i := range xs {
			xs[i] = fmt.Sprintf(`"item%d":1`, i)
		}
		return "{" + strings.Join(xs, ",") + "}"
	}
	// a PNG whose header says 4097×4097: refused on the header, never decoded
	bigPNG := pngBytes(t, 1, 1)
	binary.BigEndian.PutUint32(bigPNG[16:], 4097)
	binary.BigEndian.PutUint32(bigPNG[20:], 4097)
	binary.BigEndian.PutUint32(bigPNG[29:], crc32.ChecksumIEEE(bigPNG[12:29]))
	cases := []struct{ name, line, want string }{
		{"note", `{"op":"note","text":"` + rep("a", MaxTextBytes+1) + `"}`, "text: 16385 bytes, more than the 16384 accepted"},
		{"events", `{"op":"step","state":{"step":5},"events":` + list(MaxListItems+1, `"e"`) + `}`, "events: 1025 entries, more than the 1024 accepted"},
		{"event", `{"op":"step","state":{"step":5},"events":["` + rep("e", MaxStringBytes+1) + `"]}`, "events[0]: 1025 bytes, more than the 1024 accepted"},
		{"cells", `{"op":"step","state":{"step":5},"cells":` + list(MaxListItems+1, `{"cell":[1,2,3],"kind":"placed"}`) + `}`, "cells: 1025 entries, more than the 1024 accepted"},
		{"cell item", `{"op":"step","state":{"step":5},"cells":[{"cell":[1,2,3],"kind":"placed","item":"` + rep("i", MaxStringBytes+1) + `"}]}`, "cells[0].item: 1025 bytes, more than the 1024 accepted"},
		{"inventory", `{"op":"step","state":{"step":5,"inventory":` + inv(MaxListItems+1) + `}}`, "state.inventory: 1025 entries, more than the 1024 accepted"},
		{"item name", `{"op":"step","state":{"step":5,"inventory":{"` + rep("n", MaxNameBytes+1) + `":1}}}`, "state.inventory key: 257 bytes, more than the 256 accepted"},
		{"count", `{"op":"step","state":{"step":5,"inventory":{"log":9000000000000000000}}}`, "state.inventory.log: 9000000000000000000 is out of range"},
		{"milestones", `{"op":"step","state":{"step":5,"milestones":` + list(MaxListItems+1, `"m"`) + `}}`, "state.milestones: 1025 entries, more than the 1024 accepted"},
		{"extra", `{"op":"step","state":{"step":5,"extra":{"k":"` + rep("x", MaxObjectBytes) + `"}}}`, "state.extra: 65544 bytes of JSON, more than the 65536 accepted"},
		{"action", `{"op":"step","state":{"step":5},"action":{"k":"` + rep("x", MaxObjectBytes) + `"}}`, "action: 65544 bytes of JSON, more than the 65536 accepted"},
		{"frame path", `{"op":"step","state":{"step":5},"frame_path":"/` + rep("p", MaxPathBytes) + `"}`, "frame_path: 4097 bytes, more than the 4096 accepted"},
		{"frame pixels", `{"op":"step","state":{"step":5},"frame_png_b64":"` + base64.StdEncoding.EncodeToString(bigPNG) + `"}`, "the PNG is 4097×4097 pixels, more than the 16777216 a frame may have"},
		{"frame b64", `{"op":"step","state":{"step":5},"frame_png_b64":"` + rep("A", base64.StdEncoding.EncodedLen(MaxFrameBytes)+4) + `"}`, "frame_png_b64: 22369628 bytes of base64, more than the 22369624"},
		{"outcome", `{"op":"end","outcome":"` + rep("o", MaxStringBytes+1) + `"}`, "outcome: 1025 bytes, more than the 1024 accepted"},
		{"error", `{"op":"end","error":"` + rep("o", MaxTextBytes+1) + `"}`, "error: 16385 bytes, more than the 16384 accepted"},
		{"line", `{"id":"big","op":"note","text":"` + rep("a", MaxLineBytes) + `"}`, "the line is 33554467 bytes, more than the 33554432 a request may be"},
	}
	lines := []string{`{"op":"begin","call":{"kind":"look"}}`, `{"op":"step","state":{"step":1,"x":0.5}}`}
	for _, c := range cases {
		lines = append(lines, c.line)
	}
	lines = append(lines, `{"op":"note","text":"`+rep("a", MaxTextBytes)+`"}`, `{"op":"end"}`)
	s, reps, res := session(t, ServeOptions{}, lines...)
	if res.Rejected != len(cases) || len(reps) != len(lines) {
		t.Fatalf("%d rejected of %d replies, want %d", res.Rejected, len(reps), len(cases))
	}
	for i, c := range cases {
		rp := reps[i+2]
		if rp.OK || !strings.Contains(rp.Error, c.want) {
			t.Errorf("%s: %.300s, want an error with %q", c.name, rp.Error, c.want)
		}
	}
	if string(reps[len(reps)-3].ID) != `"big"` {
		t.Errorf("the over-long line's id is %s, want \"big\"", reps[len(reps)-3].ID)
	}
	if !reps[len(reps)-1].OK {
		t.Fatalf("end: %+v", reps[len(reps)-1])
	}
	out := readJSON(t, s.Path("episodes/ep_000000/outcome.json"))
	if out["ticks"] != 1.0 {
		t.Errorf("ticks %v: a refused step was recorded", out["ticks"])
	}
	verifyClean(t, s)
	if fi, _ := os.Stat(s.Path(episodes.IndexFileName)); fi.Size() > 64<<10 {
		t.Errorf("index.jsonl is %d bytes after refused lines", fi.Size())
	}
}

// TestEpisodeEventBytes: an episode's event lines are bounded together
// (its index row lists them all); the step past the bound is refused and
// the episode still ends.
func TestEpisodeEventBytes(t *testing.T) {
	r, err := NewRecorder(newStore(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.Begin(Call{Kind: "dig"})
	ev := strings.Repeat("e", MaxStringBytes)
	n := MaxEpisodeEventBytes / MaxStringBytes
	for i := range n {
		if err := r.Step(Step{State: st(int64(i+1), 0, 0, 0), Events: []string{ev}}); err != nil {
			t.Fatalf("step %d: %v", i+1, err)
		}
	}
	err = r.Step(Step{State: st(int64(n+1), 0, 0, 0), Events: []string{"x"}})
	if err == nil || !strings.Contains(err.Error(), "more than the 1048576 one episode keeps") {
		t.Fatalf("step past the episode's event bytes: %v", err)
	}
	row, err := r.End()
	if err != nil {
		t.Fatal(err)
	}
	if len(row.Raw) > 2*MaxEpisodeEventBytes {
		t.Errorf("row is %d bytes", len(row.Raw))
	}
}

// TestStateNumbersBounded: a step with a non-finite or absurd coordinate,
// angle, health or step number, or an extra/action/args number JSON cannot
// carry, is refused, so every accepted episode can be saved and its grid
// cells are real ones.
func TestStateNumbersBounded(t *testing.T) {
	cases := []struct{ name, line, want string }{
		{"x huge", `{"op":"step","state":{"step":5,"x":1.79e308}}`, "state.x: 1.79e+308 is out of range (|state.x| ≤ 1e+08)"},
		{"y", `{"op":"step","state":{"step":5,"y":-100000001}}`, "state.y: -1.00000001e+08 is out of range"},
		{"z", `{"op":"step","state":{"step":5,"z":1e9}}`, "state.z: 1e+09 is out of range"},
		{"yaw", `{"op":"step","state":{"step":5,"yaw":1e300}}`, "state.yaw: 1e+300 is out of range"},
		{"pitch", `{"op":"step","state":{"step":5,"pitch":-1e300}}`, "state.pitch: -1e+300 is out of range"},
		{"health", `{"op":"step","state":{"step":5,"health":1e300}}`, "state.health: 1e+300 is out of range"},
		{"step", `{"op":"step","state":{"step":9000000000000000000}}`, "state.step: 9000000000000000000 is out of range"},
		{"cell", `{"op":"step","state":{"step":5},"cells":[{"cell":[1,-9000000000,3],"kind":"placed"}]}`, "cells[0].cell[1]: -9000000000 is out of range"},
		{"extra", `{"op":"step","state":{"step":5,"extra":{"goals":[1,1e400]}}}`, "state.extra.goals[1]: 1e400 is not a number a JSON reader can hold"},
		{"action", `{"op":"step","state":{"step":5},"action":{"camera":[0,-1e999]}}`, "action.camera[1]: -1e999 is not a number"},
		{"args", `{"op":"begin","call":{"kind":"go","args":{"x":1e309}}}`, "call.args.x: 1e309 is not a number"},
		{"meta", `{"op":"begin","call":{"kind":"go","meta":{"t":1e309}}}`, "call.meta.t: 1e309 is not a number"},
	}
	lines := []string{`{"op":"begin","call":{"kind":"look"}}`, `{"op":"step","state":{"step":1,"x":0.5,"y":64}}`}
	for _, c := range cases {
		lines = append(lines, c.line)
	}
	lines = append(lines, `{"op":"step","state":{"step":2,"x":-30000000.5,"y":-100000000,"z":100000000}}`, `{"op":"end"}`)
	s, reps, res := session(t, ServeOptions{}, lines...)
	if res.Rejected != len(cases) {
		t.Fatalf("%d rejected, want %d: %+v", res.Rejected, len(cases), reps)
	}
	for i, c := range cases {
		rp := reps[i+2]
		if rp.OK || !strings.Contains(rp.Error, c.want) {
			t.Errorf("%s: %q, want an error with %q", c.name, rp.Error, c.want)
		}
	}
	if !reps[len(reps)-1].OK {
		t.Fatalf("end: %+v", reps[len(reps)-1])
	}
	verifyClean(t, s)
	g, err := os.Open(s.Path(episodes.GridFileName))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	sc := bufio.NewScanner(g)
	for sc.Scan() {
		var row struct{ Cell []float64 }
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		for _, v := range row.Cell {
			if math.Abs(v) > MaxCoord+1 {
				t.Errorf("grid cell %v", row.Cell)
			}
		}
	}

	// Go: the same bounds on Initial and Step.
	r, _ := NewRecorder(newStore(t), Options{})
	defer r.Close()
	if _, err := r.Initial(st(0, math.NaN(), 0, 0), nil); err == nil || !strings.Contains(err.Error(), "state.x: NaN is not a finite number") {
		t.Errorf("Go: NaN initial x: %v", err)
	}
	r.Begin(Call{Kind: "x"})
	bad := st(1, 0, math.Inf(1), 0)
	if err := r.Step(Step{State: bad}); err == nil || !strings.Contains(err.Error(), "state.y: +Inf is not a finite number") {
		t.Errorf("Go: +Inf y: %v", err)
	}
	ex := st(1, 0, 0, 0)
	ex.Extra = map[string]any{"v": math.NaN()}
	if err := r.Step(Step{State: ex}); err == nil || !strings.Contains(err.Error(), "state.extra.v: NaN") {
		t.Errorf("Go: NaN in extra: %v", err)
	}
	if err := r.Step(Step{State: st(1, 0, 0, 0)}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.End(); err != nil {
		t.Fatalf("Go: end after refused steps: %v", err)
	}
}

// FuzzReadLine: readLine returns every line of at most limit bytes as it
// is, and for a longer one its length and no more than limit bytes.
func FuzzReadLine(f *testing.F) {
	f.Add([]byte("a\nbb\n\nccc"), 2)
	f.Add([]byte("0123456789\nx\n"), 4)
	f.Add([]byte(""), 1)
	f.Fuzz(func(t *testing.T, in []byte, limit int) {
		if limit < 1 || limit > 64 {
			return
		}
		br := bufio.NewReaderSize(bytes.NewReader(in), 16)
		var want [][]byte
		for rest := in; len(rest) > 0; {
			i := bytes.IndexByte(rest, '\n')
			if i < 0 {
				want = append(want, rest)
				break
			}
			want = append(want, rest[:i+1])
			rest = rest[i+1:]
		}
		for _, w := range want {
			line, long, err := readLine(br, limit)
			if err != nil && w[len(w)-1] == '\n' {
				t.Fatalf("error %v before the end", err)
			}
			if len(w) > limit {
				if long != int64(len(w)) || len(line) > limit {
					t.Fatalf("long line %q: got long=%d, %d bytes kept", w, long, len(line))
				}
			} else if long != 0 || !bytes.Equal(line, w) {
				t.Fatalf("line %q: got %q long=%d", w, line, long)
			}
		}
		if line, long, err := readLine(br, limit); len(line) != 0 || long != 0 || err == nil {
			t.Fatalf("after the last line: %q %d %v", line, long, err)
		}
	})
}
