package episodes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

var fixtures = []string{"../testdata/paper-run/store", "../testdata/paper-run-diamond/store"}

// copyTree copies a fixture store so tests may write to it.
func copyTree(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestFixtureRowsRoundTrip reads every fixture row and appends its Raw
// bytes through an Appender: the new file must equal the original.
func TestFixtureRowsRoundTrip(t *testing.T) {
	for _, fx := range fixtures {
		for _, name := range []string{IndexFileName, GridFileName} {
			t.Run(filepath.Base(filepath.Dir(fx))+"/"+name, func(t *testing.T) {
				orig, err := os.ReadFile(filepath.Join(fx, name))
				if err != nil {
					t.Fatal(err)
				}
				out := filepath.Join(t.TempDir(), name)
				a, err := OpenAppender(out)
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				_, err = ScanFile(filepath.Join(fx, name), 0, func(l Line) error {
					n++
					var raw []byte
					if name == IndexFileName {
						r, err := ParseRow(l.Data)
						if err != nil {
							return err
						}
						raw = r.Raw
						// The decoded row re-encodes byte-identical too.
						var m map[string]any
						d := json.NewDecoder(bytes.NewReader(r.Raw))
						d.UseNumber()
						if err := d.Decode(&m); err != nil {
							return err
						}
						re, err := MarshalPy(m)
						if err != nil {
							return err
						}
						if !bytes.Equal(re, r.Raw) {
							return fmt.Errorf("row %s: MarshalPy differs:\n got %s\nwant %s", r.ID, re, r.Raw)
						}
					} else {
						g, err := ParseGridRow(l.Data)
						if err != nil {
							return err
						}
						re, err := g.Marshal()
						if err != nil {
							return err
						}
						if !bytes.Equal(re, l.Data) {
							return fmt.Errorf("grid line %d: Marshal differs:\n got %s\nwant %s", l.No, re, l.Data)
						}
						raw = append([]byte(nil), l.Data...)
					}
					return a.Append(raw)
				})
				if err != nil {
					t.Fatal(err)
				}
				a.Close()
				got, _ := os.ReadFile(out)
				if !bytes.Equal(got, orig) {
					t.Fatalf("re-written %s differs from the fixture (%d vs %d bytes)", name, len(got), len(orig))
				}
				if n < 70 {
					t.Fatalf("only %d rows read", n)
				}
			})
		}
	}
}

// TestMarshalPyIndentFixtureFiles: every action.json, outcome.json and
// state.json of the fixtures re-encodes byte-identical.
func TestMarshalPyIndentFixtureFiles(t *testing.T) {
	n := 0
	for _, fx := range fixtures {
		files, _ := filepath.Glob(filepath.Join(fx, "episodes", "*", "*.json"))
		more, _ := filepath.Glob(filepath.Join(fx, "episodes", "*", "state", "state.json"))
		for _, f := range append(files, more...) {
			orig, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var v any
			d := json.NewDecoder(bytes.NewReader(orig))
			d.UseNumber()
			if err := d.Decode(&v); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			got, err := MarshalPyIndent(v)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(bytes.TrimRight(orig, "\n"), got) {
				t.Errorf("%s: MarshalPyIndent differs:\n%s", f, firstDiff(got, orig))
			}
			n++
		}
	}
	if n < 200 {
		t.Fatalf("only %d files checked", n)
	}
}

func firstDiff(a, b []byte) string {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			lo := max(0, i-40)
			return fmt.Sprintf("at byte %d: got %q want %q", i, a[lo:min(len(a), i+40)], b[lo:min(len(b), i+40)])
		}
	}
	return fmt.Sprintf("lengths %d vs %d", len(a), len(b))
}

func TestFormatPyFloat(t *testing.T) {
	for _, c := range []struct {
		f    float64
		want string
	}{
		{69, "69.0"}, {3182.699999988079, "3182.699999988079"}, {0.1, "0.1"}, {-0.0, "0.0"},
		{1e16, "1e+16"}, {1.5e-5, "1.5e-05"}, {0.0001, "0.0001"}, {123456789012345.0, "123456789012345.0"},
		{-2.5, "-2.5"}, {1e22, "1e+22"},
	} {
		if got := FormatPyFloat(c.f); got != c.want {
			t.Errorf("FormatPyFloat(%v) = %q, want %q", c.f, got, c.want)
		}
	}
	// A float64 1.0 inside a map stays a float; an int stays an int;
	// non-ASCII is escaped as Python does.
	b, err := MarshalPy(map[string]any{"a": 1.0, "b": 2, "c": "é☃😀", "d": []any{1.5, nil, true}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"a": 1.0, "b": 2, "c": "\u00e9\u2603\ud83d\ude00", "d": [1.5, null, true]}`
	if string(b) != want {
		t.Fatalf("MarshalPy = %s\nwant      %s", b, want)
	}
}

// TestMarshalPyMatchesPython compares MarshalPy with python3's json.dumps
// on the fixture index rows and a few tricky values, when python3 exists.
func TestMarshalPyMatchesPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Log("python3 not found; the fixture byte comparisons above cover the same ground")
		return
	}
	vals := []any{map[string]any{"x": 0.1 + 0.2, "y": 1e-7, "z": 123456789.125, "s": "tab\t\"q\" \x01 ü"}, []any{1.0, 2, -0.5, "a/b"}}
	for _, v := range vals {
		in, _ := json.Marshal(v)
		cmd := exec.Command(py, "-c", "import json,sys; v=json.loads(sys.stdin.read()); sys.stdout.write(json.dumps(v, sort_keys=True)+'\\n'+json.dumps(v, sort_keys=True, indent=1))")
		cmd.Stdin = bytes.NewReader(in)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		parts := strings.SplitN(string(out), "\n", 2)
		var tree any
		d := json.NewDecoder(bytes.NewReader(in))
		d.UseNumber()
		d.Decode(&tree)
		a, _ := MarshalPy(tree)
		b, _ := MarshalPyIndent(tree)
		// json.loads turns 1.0 into a float, which encoding/json wrote as 1.
		if string(a) != parts[0] && !strings.Contains(string(in), "1,") {
			t.Errorf("MarshalPy = %s, python %s", a, parts[0])
		}
		if string(b) != parts[1] && !strings.Contains(string(in), "1,") {
			t.Errorf("MarshalPyIndent = %s, python %s", b, parts[1])
		}
	}
}

func TestInitOpenVerify(t *testing.T) {
	dir := t.TempDir()
	s, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Init(dir); err == nil {
		t.Fatal("second Init succeeded")
	}
	s2, err := Open(dir)
	if err != nil || s2.Format.Version != FormatVersion || s2.Format.ID != s.Format.ID {
		t.Fatalf("Open: %+v %v", s2, err)
	}
	rep, err := Verify(s2)
	if err != nil || !rep.OK() || len(rep.Issues) != 0 {
		t.Fatalf("fresh store: %v %+v", err, rep)
	}
	if _, err := Open(t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a store") {
		t.Fatalf("empty dir opened: %v", err)
	}
	os.WriteFile(filepath.Join(dir, FormatFileName), []byte(`{"format":"mfm-store","version":99}`), 0o644)
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("future version opened: %v", err)
	}
}

func TestVerifyFixtures(t *testing.T) {
	s, err := Open(fixtures[0])
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Verify(s)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Rows != 78 || rep.GridRows != 308 {
		t.Fatalf("paper-run: ok=%v rows=%d grid=%d issues=%v", rep.OK(), rep.Rows, rep.GridRows, rep.Issues)
	}
	// 78 missing frames + no format marker, all warnings.
	if w := rep.Count(Warning); w != 79 {
		t.Fatalf("paper-run warnings = %d, want 79", w)
	}
	s, _ = Open(fixtures[1])
	rep, _ = Verify(s)
	if rep.OK() || rep.Rows != 611 {
		t.Fatalf("diamond store is incomplete, Verify says ok=%v rows=%d", rep.OK(), rep.Rows)
	}
	if !strings.Contains(rep.Issues[len(rep.Issues)-1].String(), "ep_000610 is missing") {
		t.Fatalf("last issue: %v", rep.Issues[len(rep.Issues)-1])
	}
}

func writeTestEpisode(t testing.TB, w *Writer, n int) string {
	t.Helper()
	id := w.NextID()
	row, _ := MarshalPy(map[string]any{"id": id, "path": "episodes/" + id, "image": "episodes/" + id + "/observation/image.png", "kind": "episode", "summary": fmt.Sprint("ep ", n), "tags": []string{}, "x": 1.0, "y": 2.0, "z": 3.0})
	g, _ := GridRow{Cell: [3]int{n, 0, 0}, Kind: CellWalked, Step: int64(n)}.Marshal()
	err := w.WriteEpisode(id, Episode{
		Files: map[string][]byte{"state/state.json": []byte("{}"), "outcome.json": []byte("{}"), "action.json": []byte("{}"), "observation/image.png": tinyPNG(t)},
		Row:   row, Grid: [][]byte{g}, Log: []byte(fmt.Sprintf("Action %d\n", n)),
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestWriterRoundTripAndTornTail(t *testing.T) {
	s, _ := Init(t.TempDir())
	w, err := s.OpenWriter()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		writeTestEpisode(t, w, i)
	}
	if err := w.WriteEpisode("ep_000099", Episode{Row: []byte("{}")}); err == nil {
		t.Fatal("wrong id accepted")
	}
	w.Close()
	// Tear the index: a half row without its newline.
	f, _ := os.OpenFile(s.Path(IndexFileName), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"id": "ep_000003", "pa`)
	f.Close()
	cur, _ := s.CurrentLife()
	rows, err := cur.AllRows()
	if err != nil || len(rows) != 3 || rows[2].ID != "ep_000002" {
		t.Fatalf("readers see %d rows (%v), want 3", len(rows), err)
	}
	rep, _ := Verify(s)
	if rep.OK() || !rep.Issues[0].Repairable || !strings.Contains(rep.Issues[0].Msg, "torn tail") {
		t.Fatalf("torn tail not reported: %v", rep.Issues)
	}
	done, err := Repair(s)
	if err != nil || len(done) != 1 {
		t.Fatalf("Repair: %v %v", done, err)
	}
	rep, _ = Verify(s)
	if !rep.OK() {
		t.Fatalf("after repair: %v", rep.Issues)
	}
	// A writer opening a torn store repairs it itself and numbers on.
	f, _ = os.OpenFile(s.Path(GridFileName), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"cell": [1,`)
	f.Close()
	os.MkdirAll(s.Path(EpisodesDir, ".tmp-ep_000003-123"), 0o755)
	w, err = s.OpenWriter()
	if err != nil {
		t.Fatal(err)
	}
	if w.NextID() != "ep_000003" {
		t.Fatalf("NextID = %s", w.NextID())
	}
	writeTestEpisode(t, w, 3)
	w.Close()
	rep, _ = Verify(s)
	if !rep.OK() || rep.Rows != 4 || rep.GridRows != 4 {
		t.Fatalf("after reopen: %+v", rep)
	}
	if _, err := os.Stat(s.Path(EpisodesDir, ".tmp-ep_000003-123")); err == nil {
		t.Fatal("interrupted episode dir not removed")
	}
}

func TestTwoWritersInProcess(t *testing.T) {
	s, _ := Init(t.TempDir())
	w, err := s.OpenWriter()
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := Open(s.Root)
	_, err = s2.OpenWriter()
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), fmt.Sprint("pid ", os.Getpid())) {
		t.Fatalf("second writer: %v", err)
	}
	if _, err := Repair(s2); !errors.Is(err, ErrLocked) {
		t.Fatalf("repair while locked: %v", err)
	}
	w.Close()
	w2, err := s2.OpenWriter()
	if err != nil {
		t.Fatalf("after Close: %v", err)
	}
	w2.Close()
}

// TestTwoWritersTwoProcesses: a child process holds the lock; this process
// gets ErrLocked naming the child's pid, and the lock is free once the
// child is killed.
func TestTwoWritersTwoProcesses(t *testing.T) {
	if dir := os.Getenv("MFM_TEST_HOLD_LOCK"); dir != "" {
		s, _ := Open(dir)
		w, err := s.OpenWriter()
		if err != nil {
			fmt.Println("ERR", err)
			os.Exit(1)
		}
		fmt.Println("LOCKED")
		var b [1]byte
		os.Stdin.Read(b[:]) // hold until killed
		w.Close()
		os.Exit(0)
	}
	s, _ := Init(t.TempDir())
	cmd := exec.Command(os.Args[0], "-test.run=^TestTwoWritersTwoProcesses$")
	cmd.Env = append(os.Environ(), "MFM_TEST_HOLD_LOCK="+s.Root)
	stdout, _ := cmd.StdoutPipe()
	stdin, _ := cmd.StdinPipe()
	defer stdin.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 7)
	if _, err := stdout.Read(buf); err != nil || string(buf) != "LOCKED\n"[:7] {
		t.Fatalf("child: %q %v", buf, err)
	}
	_, err := s.OpenWriter()
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), fmt.Sprint("pid ", cmd.Process.Pid)) {
		t.Fatalf("second writer: %v", err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	w, err := s.OpenWriter()
	if err != nil {
		t.Fatalf("lock not released by the killed holder: %v", err)
	}
	w.Close()
}

func TestLives(t *testing.T) {
	s, _ := Init(t.TempDir())
	os.WriteFile(s.Path(MineDir, "notes.md"), []byte("keep me\n"), 0o644)
	w, _ := s.OpenWriter()
	writeTestEpisode(t, w, 0)
	writeTestEpisode(t, w, 1)
	os.WriteFile(s.Path(RunFileName), []byte(`{"task":{"name":"life one"}}`), 0o644)
	before := map[string][]byte{}
	for _, f := range []string{IndexFileName, GridFileName, LogFileName, RunFileName, "episodes/ep_000001/outcome.json"} {
		before[f], _ = os.ReadFile(s.Path(f))
	}
	life, err := w.NewLife()
	if err != nil || life.N != 1 {
		t.Fatalf("NewLife: %+v %v", life, err)
	}
	for f, b := range before {
		got, err := os.ReadFile(filepath.Join(life.Root, f))
		if err != nil || !bytes.Equal(got, b) {
			t.Fatalf("previous/life_1/%s changed: %v", f, err)
		}
	}
	if b, _ := os.ReadFile(s.Path(MineDir, "notes.md")); string(b) != "keep me\n" {
		t.Fatal("mine/ did not stay")
	}
	if _, err := os.Stat(s.Path(RunFileName)); !os.IsNotExist(err) {
		t.Fatalf("life 1's run.json stayed at the store's root for the next play to overwrite: %v", err)
	}
	if w.NextID() != "ep_000000" {
		t.Fatalf("new life numbers from %s", w.NextID())
	}
	writeTestEpisode(t, w, 0)
	w.Close()
	lives, _ := s.Lives()
	if len(lives) != 2 || !lives[1].Current || lives[1].N != 2 {
		t.Fatalf("lives: %+v", lives)
	}
	rep, _ := Verify(s)
	if !rep.OK() || rep.Rows != 3 || rep.Lives != 2 {
		t.Fatalf("verify: %+v", rep)
	}

	// An interrupted life change: the marker exists and only index.jsonl
	// moved. The next writer finishes it.
	tmp := s.Path(PreviousDir, ".tmp-life_2")
	os.MkdirAll(tmp, 0o755)
	idx, _ := os.ReadFile(s.Path(IndexFileName))
	os.Rename(s.Path(IndexFileName), filepath.Join(tmp, IndexFileName))
	if rep, _ := Verify(s); rep.OK() {
		t.Fatal("interrupted life change not reported")
	}
	w, err = s.OpenWriter()
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	lives, _ = s.Lives()
	if len(lives) != 3 {
		t.Fatalf("after finishing: %d lives", len(lives))
	}
	got, _ := os.ReadFile(filepath.Join(lives[1].Root, IndexFileName))
	if !bytes.Equal(got, idx) {
		t.Fatal("life_2 index changed")
	}
	if _, err := os.Stat(filepath.Join(lives[1].Root, EpisodesDir, "ep_000000")); err != nil {
		t.Fatal("life_2 episodes not moved")
	}
	if rep, _ := Verify(s); !rep.OK() {
		t.Fatalf("after finishing: %v", rep.Issues)
	}
}

func TestEpisodeAndLifeNames(t *testing.T) {
	for _, c := range []struct {
		id string
		n  int64
		ok bool
	}{{"ep_000000", 0, true}, {"ep_000123", 123, true}, {"ep_1234567", 1234567, true}, {"ep_00001", 0, false}, {"ep_0000001", 0, false}, {"ep_-00001", 0, false}, {"x", 0, false}} {
		n, ok := ParseEpisodeID(c.id)
		if ok != c.ok || (ok && n != c.n) {
			t.Errorf("ParseEpisodeID(%q) = %d, %v", c.id, n, ok)
		}
	}
	for _, c := range []struct {
		s  string
		ok bool
	}{{"life_1", true}, {"life_0", false}, {"life_01", false}, {"life_x", false}} {
		if _, ok := ParseLifeName(c.s); ok != c.ok {
			t.Errorf("ParseLifeName(%q) ok=%v", c.s, ok)
		}
	}
}

func TestParseRowRejects(t *testing.T) {
	for _, line := range []string{``, `[]`, `{"path": "x"}`, `{"id": "ep_000001", "path": "../../etc"}`, `{"id": "ep_000001", "path": "/abs"}`, `{"id": 3}`} {
		if _, err := ParseRow([]byte(line)); err == nil {
			t.Errorf("ParseRow(%s) accepted", line)
		}
	}
}

func FuzzParseRow(f *testing.F) {
	b, _ := os.ReadFile(filepath.Join(fixtures[1], IndexFileName))
	for i, l := range bytes.Split(b, []byte("\n")) {
		if i%50 == 0 {
			f.Add(l)
		}
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := ParseRow(line)
		if err != nil {
			return
		}
		if r.ID == "" || filepath.IsAbs(r.Path) || strings.HasPrefix(filepath.Clean(r.Path), "..") {
			t.Fatalf("accepted bad row %+v", r)
		}
		r2, err := ParseRow(r.Raw)
		if err != nil || r2.ID != r.ID {
			t.Fatalf("Raw does not re-parse: %v", err)
		}
	})
}

func FuzzParseGridRow(f *testing.F) {
	f.Add([]byte(`{"cell": [3170, 69, 1402], "kind": "walked", "step": 1}`))
	f.Add([]byte(`{"amount": 2.0, "cause": "lava", "cell": [1, 2, 3], "kind": "hazard", "step": 9}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		g, err := ParseGridRow(line)
		if err != nil {
			return
		}
		b, err := g.Marshal()
		if err != nil {
			t.Fatalf("marshal %+v: %v", g, err)
		}
		g2, err := ParseGridRow(b)
		if err != nil || g2.Kind != g.Kind || g2.Cell != g.Cell || g2.Step != g.Step {
			t.Fatalf("round trip %s -> %+v (%v)", b, g2, err)
		}
	})
}

func FuzzScanLines(f *testing.F) {
	f.Add([]byte("a\nb\nc"))
	f.Add([]byte("\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var got []byte
		end, err := ScanLines(bytes.NewReader(data), 0, func(l Line) error {
			if int(l.Offset) > len(data) || !bytes.Equal(data[l.Offset:l.Offset+int64(len(l.Data))], l.Data) {
				t.Fatalf("offset %d wrong", l.Offset)
			}
			got = append(append(got, l.Data...), '\n')
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want := data[:bytes.LastIndexByte(data, '\n')+1]
		if end != int64(len(want)) || !bytes.Equal(got, want) {
			t.Fatalf("ScanLines end=%d want %d", end, len(want))
		}
	})
}

// TestWriterEpisodeModes: a written episode is readable by every user, its
// directories 0755 and its files 0644 (under the usual umask 022), as the
// mount serves it to users other than the recorder's.
func TestWriterEpisodeModes(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	s, _ := Init(t.TempDir())
	w, err := s.OpenWriter()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	id := writeTestEpisode(t, w, 0)
	n := 0
	err = filepath.WalkDir(s.Path(EpisodesDir, id), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o644)
		if d.IsDir() {
			want = 0o755
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
		}
		n++
		return nil
	})
	if err != nil || n < 3 {
		t.Fatalf("walked %d entries: %v", n, err)
	}
}

// FuzzScanLinesMax: every line of at most maxLen bytes is passed as it is,
// every longer one with Data nil and Long its length, at its offset.
func FuzzScanLinesMax(f *testing.F) {
	f.Add([]byte("a\nbbbb\nc"), 2)
	f.Add([]byte("\n\nxxxxxxx\n"), 3)
	f.Fuzz(func(t *testing.T, data []byte, maxLen int) {
		if maxLen < 1 || maxLen > 16 {
			return
		}
		var off int64
		end, err := ScanLinesMax(bytes.NewReader(data), 0, maxLen, func(l Line) error {
			if l.Offset != off {
				t.Fatalf("offset %d, want %d", l.Offset, off)
			}
			i := bytes.IndexByte(data[off:], '\n')
			want := data[off : off+int64(i)]
			if len(want) > maxLen {
				if l.Data != nil || l.Long != int64(len(want)) {
					t.Fatalf("long line %q: Data %q Long %d", want, l.Data, l.Long)
				}
			} else if l.Long != 0 || !bytes.Equal(l.Data, want) {
				t.Fatalf("line %q: Data %q Long %d", want, l.Data, l.Long)
			}
			off += int64(i) + 1
			return nil
		})
		if err != nil || end != int64(bytes.LastIndexByte(data, '\n')+1) || end != off {
			t.Fatalf("end %d, off %d: %v", end, off, err)
		}
	})
}

// TestScanLinesMaxLongLines: lines longer than the reader's buffer are
// accumulated up to maxLen and only counted past it.
func TestScanLinesMaxLongLines(t *testing.T) {
	kept := bytes.Repeat([]byte("k"), 600<<10)
	skipped := bytes.Repeat([]byte("s"), 2<<20)
	data := slices.Concat(kept, []byte("\n"), skipped, []byte("\nend\n"))
	var got []Line
	end, err := ScanLinesMax(bytes.NewReader(data), 10, 1<<20, func(l Line) error {
		l.Data = bytes.Clone(l.Data)
		got = append(got, l)
		return nil
	})
	if err != nil || end != 10+int64(len(data)) || len(got) != 3 {
		t.Fatalf("end %d, %d lines: %v", end, len(got), err)
	}
	if !bytes.Equal(got[0].Data, kept) || got[0].Long != 0 {
		t.Errorf("line 1: %d bytes, Long %d", len(got[0].Data), got[0].Long)
	}
	if got[1].Data != nil || got[1].Long != int64(len(skipped)) || got[1].Offset != 10+int64(len(kept))+1 {
		t.Errorf("line 2: %d bytes, Long %d, offset %d", len(got[1].Data), got[1].Long, got[1].Offset)
	}
	if string(got[2].Data) != "end" {
		t.Errorf("line 3: %q", got[2].Data)
	}
}
