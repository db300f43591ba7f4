package content

import (
	"encoding/json"
	"testing"
	"time"
)

// FuzzAppendAccessRow: an access-log line is exactly the AccessRecord
// json.Marshal writes, whether appendAccessRow writes it directly (plain
// strings) or through json.Marshal (anything to escape), and decodes back
// to the record. The seeds run with every go test.
func FuzzAppendAccessRow(f *testing.F) {
	for _, s := range []struct {
		path, kind string
		pid        uint32
		nanos      int64
	}{
		{"/episodes/ep_000012/observation/image.png", "frame", 4242, 1764771000123456789},
		{"/episodes/ep_000012/observation/image@crop=1,2,3,4@zoom=4.png", "view", 1, 1764771000000000000},
		{"/mine/notes & plans/<draft>.md", "note", 0, 0},
		{"/mine/\"quoted\"\\back\tslash\n", "note-write", 7, -1},
		{"/mine/é \u2028 \xff", "note", 9, 1},
		{"/q/tag:stuck last:5/results.jsonl", "query", 12, 999},
	} {
		f.Add(s.path, s.kind, s.pid, s.nanos)
	}
	f.Fuzz(func(t *testing.T, path, kind string, pid uint32, nanos int64) {
		e := accessEntry{at: time.Unix(0, nanos), path: path, kind: kind, pid: pid}
		want, err := json.Marshal(AccessRecord{Time: e.at.UTC().Format(time.RFC3339Nano), Path: path, Kind: kind, Pid: pid})
		if err != nil {
			t.Fatal(err)
		}
		got := appendAccessRow([]byte("prev\n"), e)
		if string(got) != "prev\n"+string(want)+"\n" {
			t.Fatalf("appendAccessRow(%q, %q, %d, %d):\n got %s\nwant %s", path, kind, pid, nanos, got[5:], want)
		}
		var r AccessRecord
		if err := json.Unmarshal(got[5:], &r); err != nil {
			t.Fatalf("line %s does not decode: %v", got[5:], err)
		}
	})
}
