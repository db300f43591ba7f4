package episodes

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"os"
	"strings"
	"testing"
)

func tinyPNG(t testing.TB) []byte {
	t.Helper()
	var b bytes.Buffer
	img := image.NewGray(image.Rect(0, 0, 16, 16))
	for i := range img.Pix {
		img.Pix[i] = uint8(i)
	}
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// writeKindEpisode writes an episode of kind with the given files.
func writeKindEpisode(t *testing.T, w *Writer, kind string, files map[string][]byte) string {
	t.Helper()
	id := w.NextID()
	row, _ := MarshalPy(map[string]any{"id": id, "path": "episodes/" + id, "image": "episodes/" + id + "/observation/image.png", "kind": kind, "summary": "s", "tags": []string{}, "x": 1.0, "y": 2.0, "z": 3.0})
	all := map[string][]byte{"state/state.json": []byte("{}"), "outcome.json": []byte("{}"), "action.json": []byte("{}")}
	for k, v := range files {
		all[k] = v
	}
	if err := w.WriteEpisode(id, Episode{Files: all, Row: row, Log: []byte("Action\n")}); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestVerifyDecodesFrames: a truncated observation image or step frame
// (a valid header, not enough data) is an error, a good one is not.
func TestVerifyDecodesFrames(t *testing.T) {
	good := tinyPNG(t)
	cut := good[:len(good)-10]
	steps := func(frame string) []byte {
		return []byte(fmt.Sprintf(`{"frame": %q, "step": 1}`+"\n", frame))
	}
	for _, c := range []struct {
		name  string
		files map[string][]byte
		want  string
	}{
		{"good", map[string][]byte{"observation/image.png": good, "frames/000001.png": good, "steps.jsonl": steps("frames/000001.png")}, ""},
		{"cut observation", map[string][]byte{"observation/image.png": cut}, "index.jsonl:1: row ep_000000: frame episodes/ep_000000/observation/image.png: not a readable PNG"},
		{"cut step frame", map[string][]byte{"observation/image.png": good, "frames/000001.png": cut, "steps.jsonl": steps("frames/000001.png")}, "steps.jsonl:1: frame frames/000001.png: not a readable PNG"},
		{"not a png", map[string][]byte{"observation/image.png": []byte("png")}, "not a readable PNG"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := Init(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			w, err := s.OpenWriter()
			if err != nil {
				t.Fatal(err)
			}
			writeKindEpisode(t, w, "episode", c.files)
			w.Close()
			rep, err := Verify(s)
			if err != nil {
				t.Fatal(err)
			}
			if c.want == "" {
				if !rep.OK() {
					t.Fatalf("%v", rep.Issues)
				}
				return
			}
			if rep.OK() || !strings.Contains(fmt.Sprint(rep.Issues), c.want) {
				t.Fatalf("issues %v, want %q", rep.Issues, c.want)
			}
		})
	}
}

// TestVerifyInitials: one initial episode per life, and only as its first.
func TestVerifyInitials(t *testing.T) {
	for _, c := range []struct {
		kinds []string
		want  string
	}{
		{[]string{"initial", "episode", "episode"}, ""},
		{[]string{"episode", "episode"}, ""},
		{[]string{"initial", "initial"}, "index.jsonl:2: several initial episodes in one life: ep_000001, and ep_000000 on line 1"},
		{[]string{"episode", "initial"}, "index.jsonl:2: initial episode ep_000001 is not the first of its life"},
	} {
		s, err := Init(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		w, err := s.OpenWriter()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range c.kinds {
			writeKindEpisode(t, w, k, map[string][]byte{"observation/image.png": tinyPNG(t)})
		}
		// a second life with its own initial is fine
		if _, err := w.NewLife(); err != nil {
			t.Fatal(err)
		}
		writeKindEpisode(t, w, "initial", nil)
		w.Close()
		rep, err := Verify(s)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for _, i := range rep.Issues {
			if i.Severity == Problem {
				got += i.String() + "\n"
			}
		}
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%v: problems %q, want %q", c.kinds, got, c.want)
		}
	}
}

// TestVerifyHugeRow: fsck names an index or grid row longer than
// MaxRowBytes, which the cue index and the maps skip.
func TestVerifyHugeRow(t *testing.T) {
	s, _ := Init(t.TempDir())
	w, err := s.OpenWriter()
	if err != nil {
		t.Fatal(err)
	}
	writeTestEpisode(t, w, 0)
	w.Close()
	huge := `{"id": "ep_000001", "note": "` + strings.Repeat("n", MaxRowBytes) + "\"}\n"
	for _, name := range []string{IndexFileName, GridFileName} {
		f, err := os.OpenFile(s.Path(name), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(huge)
		f.Close()
	}
	rep, err := Verify(s)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(":2: row of %d bytes, more than the %d a reader takes", len(huge)-1, MaxRowBytes)
	var got []string
	for _, i := range rep.Issues {
		if strings.Contains(i.String(), want) {
			got = append(got, i.String())
		}
	}
	if len(got) != 2 || rep.Rows != 1 {
		t.Errorf("issues %v (rows %d), want the huge row of index.jsonl and grid.jsonl named", rep.Issues, rep.Rows)
	}
}
