package fleettest

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/mfm-project/mfm/episodes"
)

// Episode writes one synthetic episode through w, the way the recorder
// commits one: files (a frame of frameSize bytes, state, action, outcome),
// a grid row, then the index row. n seeds its content; tags are its tags.
func Episode(w *episodes.Writer, n int, frameSize int, tags ...string) (id string, err error) {
	id = w.NextID()
	cur, err := w.Store().CurrentLife()
	if err != nil {
		return "", err
	}
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	frame := make([]byte, frameSize)
	for i := range frame {
		frame[i] = byte(rng.IntN(256))
	}
	row, err := LifeRow(id, cur.N, n, tags...)
	if err != nil {
		return "", err
	}
	x, z := float64(n%97)*1.5, float64(n%89)*-2.5
	action := actions[n%len(actions)]
	grid, err := episodes.GridRow{Cell: [3]int{int(x), 64, int(z)}, Kind: episodes.CellWalked, Step: int64(n*10 + 9), Episode: id}.Marshal()
	if err != nil {
		return "", err
	}
	err = w.WriteEpisode(id, episodes.Episode{
		Files: map[string][]byte{
			"observation/image.png": frame,
			"state/state.json":      fmt.Appendf(nil, "{\n \"step\": %d\n}", n*10),
			"action.json":           fmt.Appendf(nil, "{\n \"call\": \"%s(n=%d)\"\n}", action, n),
			"outcome.json":          fmt.Appendf(nil, "{\n \"tags\": []\n}"),
		},
		Row:  row,
		Grid: [][]byte{grid},
		Log:  fmt.Appendf(nil, "Action %d | Step %d\n", n, n*10+9),
	})
	return id, err
}

var actions = []string{"go_to", "dig_down", "pillar_up", "collect_drops"}

// Row is the synthetic index row of episode id, seeded by n (as Episode
// writes it): position, steps, action and summary vary with n.
func Row(id string, n int, tags ...string) ([]byte, error) {
	return LifeRow(id, 1, n, tags...)
}

// LifeRow is Row for an episode of life.
func LifeRow(id string, life, n int, tags ...string) ([]byte, error) {
	x, z := float64(n%97)*1.5, float64(n%89)*-2.5
	action := actions[n%len(actions)]
	if tags == nil {
		tags = []string{}
	}
	return episodes.MarshalPy(map[string]any{
		"id": id, "path": "episodes/" + id, "image": "episodes/" + id + "/observation/image.png",
		"kind": "episode", "first_step": int64(n * 10), "last_step": int64(n*10 + 9),
		"action_kind": action, "summary": fmt.Sprintf("[ACTION] %s(n=%d) -> 9 ticks: moved %.1f", action, n, float64(n%7)),
		"tags": tags, "x": x, "y": 64.0, "z": z, "gui_open": false, "life": life,
		"time": time.Now().UTC().Format("2006-01-02T15:04:05.000000Z"), "events": []string{},
		"attachment": nil, "observation_hash": nil,
	})
}
