package episodes

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testEpisode is an episode a test store holds: its id and the files of
// its directory ("" leaves a file out).
type testEpisode struct {
	id, outcome, state string
	image              bool
}

// buildStore writes a store: now/ files (name → content), the previous
// lives' and the current life's episodes, and a torn row at the end of the
// current index when torn is set.
func buildStore(t *testing.T, now map[string]string, previous [][]testEpisode, current []testEpisode, torn bool) *Store {
	t.Helper()
	s, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	put := func(p, data string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	life := func(root string, eps []testEpisode) {
		var index strings.Builder
		for _, e := range eps {
			fmt.Fprintf(&index, `{"id": %q, "image": "episodes/%s/observation/image.png", "path": "episodes/%s"}`+"\n", e.id, e.id, e.id)
			dir := filepath.Join(root, EpisodesDir, e.id)
			if e.outcome != "" {
				put(filepath.Join(dir, OutcomeFileName), e.outcome)
			}
			if e.state != "" {
				put(filepath.Join(dir, filepath.FromSlash(StateFileName)), e.state)
			}
			if e.image {
				put(filepath.Join(dir, filepath.FromSlash(ObservationFileName)), "png of "+e.id)
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		put(filepath.Join(root, IndexFileName), index.String())
	}
	for i, eps := range previous {
		life(s.Path(PreviousDir, LifeName(i+1)), eps)
	}
	life(s.Root, current)
	if torn {
		f, err := os.OpenFile(s.Path(IndexFileName), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(f, `{"id": "ep_000099", "path": "episodes/ep_0000`)
		f.Close()
	}
	for name, data := range now {
		put(s.Path(NowDir, name), data)
	}
	return s
}

const (
	endOutcome   = `{"end_state": {"step": 9, "tag": "end"}, "last_step": 9, "notes": []}`
	paperOutcome = `{"last_step": 9, "milestone_transition": null, "notes": []}`
	startState   = `{"step": 5, "tag": "start"}`
)

// TestFindLatestState is the latest-state rule, one fallback per case.
func TestFindLatestState(t *testing.T) {
	cases := []struct {
		name     string
		now      map[string]string
		previous [][]testEpisode
		current  []testEpisode
		torn     bool
		source   string // "" wants fs.ErrNotExist
		json     string
	}{
		{name: "now/state.json first",
			now:     map[string]string{NowStateName: `{"tag": "now"}`},
			current: []testEpisode{{id: "ep_000000", outcome: endOutcome, state: startState}},
			source:  "now/state.json", json: `{"tag": "now"}`},
		{name: "else the last episode's end state",
			current: []testEpisode{{id: "ep_000000", state: `{"tag": "older"}`}, {id: "ep_000001", outcome: endOutcome, state: startState}},
			source:  "episodes/ep_000001/outcome.json end_state", json: `{"step": 9, "tag": "end"}`},
		{name: "a paper outcome has no end state: the start state",
			current: []testEpisode{{id: "ep_000000", outcome: paperOutcome, state: startState}},
			source:  "episodes/ep_000000/state/state.json", json: startState},
		{name: "a null end state: the start state",
			current: []testEpisode{{id: "ep_000000", outcome: `{"end_state": null}`, state: startState}},
			source:  "episodes/ep_000000/state/state.json", json: startState},
		{name: "a malformed outcome: the start state",
			current: []testEpisode{{id: "ep_000000", outcome: `{"end_state": `, state: startState}},
			source:  "episodes/ep_000000/state/state.json", json: startState},
		{name: "an episode without files: the one before",
			current: []testEpisode{{id: "ep_000000", state: startState}, {id: "ep_000001"}},
			source:  "episodes/ep_000000/state/state.json", json: startState},
		{name: "a torn last row is not a row",
			current: []testEpisode{{id: "ep_000000", state: startState}}, torn: true,
			source: "episodes/ep_000000/state/state.json", json: startState},
		{name: "an empty current life: the previous life's last episode",
			previous: [][]testEpisode{{{id: "ep_000000", state: `{"tag": "life 1"}`}}, {{id: "ep_000000", outcome: endOutcome}}},
			source:   "previous/life_2/episodes/ep_000000/outcome.json end_state", json: `{"step": 9, "tag": "end"}`},
		{name: "nothing recorded",
			current: []testEpisode{{id: "ep_000000", outcome: paperOutcome}},
			source:  ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := buildStore(t, c.now, c.previous, c.current, c.torn)
			got, err := FindLatestState(s)
			if c.source == "" {
				if !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("got %+v, %v; want an error wrapping fs.ErrNotExist", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Source != c.source || string(got.JSON) != c.json {
				t.Fatalf("got %s %s, want %s %s", got.Source, got.JSON, c.source, c.json)
			}
			if _, err := DecodeState(got.JSON); err != nil {
				t.Fatalf("the latest state does not decode: %v", err)
			}
		})
	}
}

func TestLatestFramePath(t *testing.T) {
	cases := []struct {
		name     string
		now      map[string]string
		previous [][]testEpisode
		current  []testEpisode
		want     string // store-relative; "" wants fs.ErrNotExist
	}{
		{name: "now/frame.png first", now: map[string]string{NowFrameName: "png"},
			current: []testEpisode{{id: "ep_000000", image: true}}, want: "now/frame.png"},
		{name: "else the last episode's observation",
			current: []testEpisode{{id: "ep_000000", image: true}, {id: "ep_000001", image: true}}, want: "episodes/ep_000001/observation/image.png"},
		{name: "the last episode without a frame: none",
			current: []testEpisode{{id: "ep_000000", image: true}, {id: "ep_000001"}}, want: ""},
		{name: "an empty current life: the previous life's",
			previous: [][]testEpisode{{{id: "ep_000003", image: true}}}, want: "previous/life_1/episodes/ep_000003/observation/image.png"},
		{name: "no episode", want: ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := buildStore(t, c.now, c.previous, c.current, false)
			got, err := LatestFramePath(s)
			if c.want == "" {
				if !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("got %q, %v; want an error wrapping fs.ErrNotExist", got, err)
				}
				return
			}
			if err != nil || got != s.Path(filepath.FromSlash(c.want)) {
				t.Fatalf("got %q, %v; want %s", got, err, c.want)
			}
		})
	}
}
