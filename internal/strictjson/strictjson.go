// Package strictjson decodes the project's hand-written JSON files (task
// files, evaluation configs, audit chains) strictly: a misspelt field or a
// second value is an error, not silently dropped.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
)

// ErrTrailing is the error for data holding more than one JSON value.
var ErrTrailing = errors.New("more than one JSON value")

// Decode decodes the one JSON value in data into v; a field v does not
// have is an error, and so is anything but white space after the value.
func Decode(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return ErrTrailing
	}
	return nil
}
