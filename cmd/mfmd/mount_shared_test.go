package main

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mfm-project/mfm/fleet/fleettest"
)

// TestSharedMountScript runs the scripts in testdata/shared against a real
// PostgreSQL and a real S3 server (versitygw): the servers named by
// MFM_TEST_POSTGRES and MFM_TEST_S3 when set, else ones this test starts
// and stops. Each script gets a fresh database ($PGURL) and bucket
// ($OBJECTS, with AWS_* set for mfmd mount).
func TestSharedMountScript(t *testing.T) {
	admin, tg := sharedServers(t)
	testscript.Run(t, testscript.Params{
		Dir: "testdata/shared",
		Setup: func(env *testscript.Env) error {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			db, err := fleettest.NewDatabase(ctx, admin)
			if err != nil {
				return err
			}
			b := tg
			b.Bucket = fmt.Sprintf("mfm-script-%d-%d", os.Getpid(), time.Now().UnixNano()%1e12)
			if err := fleettest.MakeBucket(ctx, b); err != nil {
				return err
			}
			env.Setenv("PGURL", db)
			env.Setenv("OBJECTS", b.URL("team"))
			env.Setenv("AWS_ENDPOINT_URL", b.Endpoint)
			env.Setenv("AWS_ACCESS_KEY_ID", b.Access)
			env.Setenv("AWS_SECRET_ACCESS_KEY", b.Secret)
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
