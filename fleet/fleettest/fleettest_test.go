package fleettest

import (
	"bytes"
	"context"
	"io"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// TestPostgresRestart: a fresh database answers, survives a crash-stop
// and restart of the cluster with its committed rows.
func TestPostgresRestart(t *testing.T) {
	pg, err := StartPostgres(false)
	if err != nil {
		Unavailable(t, err)
	}
	defer pg.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	u, err := NewDatabase(ctx, pg.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE t (v int); INSERT INTO t VALUES (7)`); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	if err := pg.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := pgx.Connect(ctx, u); err == nil {
		t.Fatal("connected to a stopped server")
	}
	if err := pg.Start(); err != nil {
		t.Fatal(err)
	}
	conn, err = pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var v int
	if err := conn.QueryRow(ctx, `SELECT v FROM t`).Scan(&v); err != nil || v != 7 {
		t.Fatalf("after restart: v=%d err=%v, want 7", v, err)
	}
}

// TestS3RoundTrip: an object put on the shared versitygw reads back, and a
// killed and restarted server still has it.
func TestS3RoundTrip(t *testing.T) {
	s, err := StartS3()
	if err != nil {
		Unavailable(t, err)
	}
	defer s.Close()
	tg := S3Target{Endpoint: s.Endpoint(), Access: S3Access, Secret: S3Secret, Bucket: "bucket1"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := MakeBucket(ctx, tg); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(tg.Endpoint)
	c, err := minio.New(u.Host, &minio.Options{Creds: credentials.NewStaticV4(tg.Access, tg.Secret, "")})
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("frame"), 10000)
	if _, err := c.PutObject(ctx, "bucket1", "a/life_1/ep_000001/observation/image.png", bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	obj, err := c.GetObject(ctx, "bucket1", "a/life_1/ep_000001/observation/image.png", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(obj)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes (err %v), want %d", len(got), err, len(data))
	}
}
