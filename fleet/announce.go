package fleet

import (
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// maxAnnouncement is the largest NOTIFY payload sent: PostgreSQL refuses
// 8,000 bytes and more.
const maxAnnouncement = 7900

// shippedRow is a row as announced on notifyChannel: the whole row when it
// fits in a notification, so a follower adds it without reading the
// database; else only its seq, and the follower reads the rows past its
// cursor.
type shippedRow struct {
	Seq   int64       `json:"seq"`
	Agent string      `json:"agent"`
	Life  int         `json:"life"`
	ID    string      `json:"id"`
	Row   string      `json:"row"` // a string: its bytes come back exactly
	Files []fileEntry `json:"files"`
}

// announcement is the payload announcing a shipped row: the row as JSON
// when it fits, else the seq alone (a decimal number).
func announcement(seq int64, agent string, life int, id string, row, files []byte) string {
	seqOnly := strconv.FormatInt(seq, 10)
	if !utf8.Valid(row) || len(row)+len(files)+len(agent)+len(id)+80 > maxAnnouncement {
		return seqOnly
	}
	b, err := json.Marshal(struct {
		Seq   int64           `json:"seq"`
		Agent string          `json:"agent"`
		Life  int             `json:"life"`
		ID    string          `json:"id"`
		Row   string          `json:"row"`
		Files json.RawMessage `json:"files"`
	}{seq, agent, life, id, string(row), files})
	if err != nil || len(b) > maxAnnouncement {
		return seqOnly
	}
	return string(b)
}

// parseAnnouncement reads a payload of notifyChannel: the whole row (ok)
// or only a seq (ok false, err nil: the rows must be read from the
// database). An error is a payload that is neither.
func parseAnnouncement(payload string) (r shippedRow, ok bool, err error) {
	if seq, perr := strconv.ParseInt(payload, 10, 64); perr == nil {
		return shippedRow{Seq: seq}, false, nil
	}
	if err := json.Unmarshal([]byte(payload), &r); err != nil {
		return shippedRow{}, false, fmt.Errorf("announcement: %w", err)
	}
	if r.Seq <= 0 || r.Agent == "" || r.ID == "" || len(r.Row) == 0 {
		return shippedRow{}, false, fmt.Errorf("announcement: seq, agent, id or row missing")
	}
	return r, true, nil
}
