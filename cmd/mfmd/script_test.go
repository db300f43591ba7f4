package main

import (
	"fmt"
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets testscript run this package's binary as the "mfmd"
// command inside scripts, in-process (no go build). Any helper may add
// scripts: every testdata/script/*.txtar runs in TestScript.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"mfmd": func() { main() },
	})
}

// TestScript runs the CLI scripts in testdata/script. Scripts see the
// repository's testdata as $TESTDATA (read-only: copy before writing).
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			wd, err := os.Getwd()
			if err != nil {
				return err
			}
			env.Setenv("TESTDATA", wd+"/../../testdata")
			return nil
		},
		Condition: func(cond string) (bool, error) {
			if cond == "root" {
				return os.Geteuid() == 0, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
	})
}
