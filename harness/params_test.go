package harness

import (
	"reflect"
	"testing"
)

// TestProcedureParamDefaults: the PARAMS forms agents write are read with
// their defaults: a one-line dict of defaults, a dict over several lines
// with comments and Python's True/False/None, per-parameter dicts, and
// mfm-param lines with =DEFAULT.
func TestProcedureParamDefaults(t *testing.T) {
	tests := []struct {
		name, src string
		want      []Param
	}{
		{"defaults on one line", "\"\"\"dig_cobble: dig down and mine cobble.\"\"\"\nPARAMS = {\"n\": 3, \"craft\": True}\n",
			[]Param{{Name: "n", Default: "3"}, {Name: "craft", Default: "True"}}},
		{"descriptions on one line", "PARAMS = {\"x\": \"screen x 0-640\", 'y': 'screen y'}\n",
			[]Param{{Name: "x", Description: "screen x 0-640"}, {Name: "y", Description: "screen y"}}},
		{"several lines", "import sys\nPARAMS = {\n    \"n\": 3,        # blocks to dig\n    \"craft\": False,\n    'item': \"cobble\",\n    \"pos\": (1, 2),\n}\n",
			[]Param{{Name: "n", Default: "3"}, {Name: "craft", Default: "False"}, {Name: "item", Description: "cobble"}, {Name: "pos", Default: "(1, 2)"}}},
		{"per-parameter dicts", "PARAMS: dict = {\"n\": {\"default\": 4, \"help\": \"blocks\"}, \"item\": {\"default\": \"stone\", \"doc\": \"what\"}, \"d\": {\"type\": \"int\"}}\n",
			[]Param{{Name: "n", Default: "4", Description: "blocks"}, {Name: "item", Default: `"stone"`, Description: "what"}, {Name: "d"}}},
		{"mfm-param lines", "#!/bin/sh\n# mfm-param: n=2: blocks to dig\n# mfm-param: item: what to take\n",
			[]Param{{Name: "n", Default: "2", Description: "blocks to dig"}, {Name: "item", Description: "what to take"}}},
		{"unclosed dict", "PARAMS = {\"n\": 3,\n", []Param{}},
		{"JSON pairs fallback", "PARAMS = {\"x\": \"a\", \"y\": \"b\" junk}\n", []Param{{Name: "x", Description: "a"}, {Name: "y", Description: "b"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &Procedure{Name: "dig_cobble", Params: []Param{}}
			parseHeader(p, []byte(tc.src))
			if !reflect.DeepEqual(p.Params, tc.want) {
				t.Errorf("params %+v, want %+v", p.Params, tc.want)
			}
		})
	}
}
