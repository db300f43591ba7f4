package fleettest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Environment variables naming servers to use instead of starting them.
const (
	// EnvPostgres is a superuser URL (postgres://user@host:port/db); each
	// test gets a database of its own created there.
	EnvPostgres = "MFM_TEST_POSTGRES"
	// EnvS3 is an S3 endpoint URL; credentials come from EnvS3Access and
	// EnvS3Secret. Each test gets a bucket of its own.
	EnvS3       = "MFM_TEST_S3"
	EnvS3Access = "MFM_TEST_S3_ACCESS"
	EnvS3Secret = "MFM_TEST_S3_SECRET"
)

// Unavailable skips t because a server it needs cannot be had, or fails it
// under CI=true, where every test must run.
func Unavailable(t testing.TB, err error) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("server unavailable (CI=true makes this a failure): %v", err)
	}
	t.Skipf("server unavailable: %v", err)
}

var shared struct {
	mu sync.Mutex
	pg *Postgres
	s3 *S3Server
}

// Main runs a test binary's tests and then stops the servers this package
// started for them. Call it from TestMain.
func Main(m *testing.M) int {
	code := m.Run()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.pg != nil {
		shared.pg.Close()
	}
	if shared.s3 != nil {
		shared.s3.Close()
	}
	return code
}

// PostgresURL returns the URL of a fresh, empty database: on the server
// named by MFM_TEST_POSTGRES, else on a cluster started once per test
// binary (stopped by Main).
func PostgresURL(t testing.TB) string {
	t.Helper()
	admin := os.Getenv(EnvPostgres)
	if admin == "" {
		shared.mu.Lock()
		if shared.pg == nil {
			pg, err := StartPostgres(false)
			if err != nil {
				shared.mu.Unlock()
				Unavailable(t, err)
				return ""
			}
			shared.pg = pg
		}
		admin = shared.pg.URL("postgres")
		shared.mu.Unlock()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	u, err := NewDatabase(ctx, admin)
	if err != nil {
		Unavailable(t, err)
	}
	return u
}

// S3Target is a bucket on an S3 server with its credentials.
type S3Target struct {
	Endpoint, Access, Secret, Bucket string
}

// URL is the s3://bucket/prefix URL of prefix in the target's bucket.
func (s S3Target) URL(prefix string) string {
	return "s3://" + s.Bucket + "/" + strings.Trim(prefix, "/")
}

// S3 returns a fresh bucket: on the server named by MFM_TEST_S3, else on a
// versitygw started once per test binary (stopped by Main).
func S3(t testing.TB) S3Target {
	t.Helper()
	tg := S3Target{Endpoint: os.Getenv(EnvS3), Access: os.Getenv(EnvS3Access), Secret: os.Getenv(EnvS3Secret)}
	if tg.Endpoint == "" {
		shared.mu.Lock()
		if shared.s3 == nil {
			s, err := StartS3()
			if err != nil {
				shared.mu.Unlock()
				Unavailable(t, err)
				return S3Target{}
			}
			shared.s3 = s
		}
		tg = S3Target{Endpoint: shared.s3.Endpoint(), Access: S3Access, Secret: S3Secret}
		shared.mu.Unlock()
	}
	tg.Bucket = fmt.Sprintf("mfm-test-%d-%d", os.Getpid(), time.Now().UnixNano()%1e12)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := MakeBucket(ctx, tg); err != nil {
		Unavailable(t, err)
	}
	return tg
}

// MakeBucket creates tg.Bucket on tg's server.
func MakeBucket(ctx context.Context, tg S3Target) error {
	u, err := url.Parse(tg.Endpoint)
	if err != nil {
		return fmt.Errorf("s3 endpoint %q: %w", tg.Endpoint, err)
	}
	c, err := minio.New(u.Host, &minio.Options{Creds: credentials.NewStaticV4(tg.Access, tg.Secret, ""), Secure: u.Scheme == "https"})
	if err != nil {
		return fmt.Errorf("s3 client for %s: %w", tg.Endpoint, err)
	}
	if err := c.MakeBucket(ctx, tg.Bucket, minio.MakeBucketOptions{}); err != nil {
		return fmt.Errorf("make bucket %s on %s: %w", tg.Bucket, tg.Endpoint, err)
	}
	return nil
}
