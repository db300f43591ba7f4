package episodes

import "testing"

func TestMatchName(t *testing.T) {
	for _, c := range []struct{ dir, want string }{
		{"episodes/ep_000123", "ep_000123"},
		{"previous/life_1/episodes/ep_000004", "life_1.ep_000004"},
		{"/episodes/ep_000001/", "ep_000001"},
		{"../x", ""},
		{"", ""},
	} {
		if got := MatchName(c.dir); got != c.want {
			t.Errorf("MatchName(%q) = %q, want %q", c.dir, got, c.want)
		}
	}
}

func TestFrameOf(t *testing.T) {
	for _, c := range []struct{ row, dir, want string }{
		{`{"id":"ep_000003","path":"episodes/ep_000003","image":"episodes/ep_000003/observation/image.png"}`, "episodes/ep_000003", "episodes/ep_000003/observation/image.png"},
		{`{"id":"ep_000004","path":"episodes/ep_000004","image":"episodes/ep_000004/observation/image.png"}`, "previous/life_1/episodes/ep_000004", "previous/life_1/episodes/ep_000004/observation/image.png"},
		{`{"id":"ep_000005","path":"episodes/ep_000005","image":null}`, "episodes/ep_000005", "episodes/ep_000005/observation/image.png"},
		{`not json`, "episodes/ep_000006", "episodes/ep_000006/observation/image.png"},
	} {
		if got := FrameOf([]byte(c.row), c.dir); got != c.want {
			t.Errorf("FrameOf(%s, %s) = %q, want %q", c.row, c.dir, got, c.want)
		}
	}
}
