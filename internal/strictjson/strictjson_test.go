package strictjson

import (
	"errors"
	"testing"
)

// TestDecode: one known object decodes; an unknown field, a second value
// or a value of the wrong type is an error; trailing white space is not.
func TestDecode(t *testing.T) {
	type obj struct {
		A int `json:"a"`
	}
	tests := []struct {
		in       string
		ok       bool
		trailing bool
	}{
		{`{"a": 1}`, true, false},
		{"{\"a\": 1}\n\t ", true, false},
		{`{"a": 1, "b": 2}`, false, false},
		{`{"a": 1} {"a": 2}`, false, true},
		{`{"a": 1} x`, false, true},
		{`[1]`, false, false},
		{``, false, false},
	}
	for _, tt := range tests {
		var v obj
		err := Decode([]byte(tt.in), &v)
		if (err == nil) != tt.ok || errors.Is(err, ErrTrailing) != tt.trailing {
			t.Errorf("Decode(%q) = %v, want ok %v, trailing %v", tt.in, err, tt.ok, tt.trailing)
		}
		if tt.ok && v.A != 1 {
			t.Errorf("Decode(%q): a = %d", tt.in, v.A)
		}
	}
}
