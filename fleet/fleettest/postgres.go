// Package fleettest starts the real servers package fleet is tested
// against, on loopback: a throwaway PostgreSQL cluster from the system's
// packages (initdb and pg_ctl in a temporary directory) and a versitygw S3
// server with its posix backend, built from its Go module. Tests get them
// through PostgresURL and S3, which use the servers named by environment
// variables when set (MFM_TEST_POSTGRES, MFM_TEST_S3) and start their own
// otherwise; with CI=true a missing server fails the test instead of
// skipping it.
package fleettest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// Postgres is a PostgreSQL cluster in a temporary directory, listening on
// 127.0.0.1:Port. Stop kills it the way a crash would; Start brings it back
// on the same port with the same data.
type Postgres struct {
	Dir  string // data directory (also holds the socket and the server log)
	Port int
	bin  string // directory of initdb, pg_ctl, postgres
	// runAs is the user the server runs as ("" when not root): PostgreSQL
	// refuses to run as root.
	runAs string
}

// pgBinDir finds the directory holding initdb and pg_ctl: the newest
// /usr/lib/postgresql/N/bin (Debian's layout), else initdb's directory in PATH.
func pgBinDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return vi > vj
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "pg_ctl")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("PostgreSQL server binaries not found (install Debian's postgresql package: apt-get install postgresql)")
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// StartPostgres creates a cluster in a new temporary directory and starts
// it. With durable false the server runs with fsync off (tests); the
// benchmark runs it durable.
func StartPostgres(durable bool) (*Postgres, error) {
	bin, err := pgBinDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "mfm-pg-")
	if err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	p := &Postgres{Dir: dir, bin: bin}
	if os.Geteuid() == 0 {
		p.runAs = "postgres"
		u, err := user.Lookup(p.runAs)
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("start postgres as root needs the system user %q (created by Debian's postgresql package): %w", p.runAs, err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("start postgres: %w", err)
		}
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	if out, err := p.run("initdb", "-D", dir, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync", "--locale=C"); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb %s: %w\n%s", dir, err, out)
	}
	conf := "listen_addresses = '127.0.0.1'\nunix_socket_directories = '" + dir + "'\nmax_connections = 200\n"
	if !durable {
		conf += "fsync = off\nfull_page_writes = off\n" // a killed server keeps commits: the OS has them
	}
	f, err := os.OpenFile(filepath.Join(dir, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString(conf)
		f.Close()
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("configure postgres: %w", err)
	}
	if p.Port, err = FreePort(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := p.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return p, nil
}

func (p *Postgres) run(tool string, args ...string) ([]byte, error) {
	name := filepath.Join(p.bin, tool)
	if p.runAs != "" {
		args = append([]string{"-u", p.runAs, "--", name}, args...)
		name = "runuser"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return exec.CommandContext(ctx, name, args...).CombinedOutput()
}

// Start starts the (stopped) server and waits until it accepts connections.
func (p *Postgres) Start() error {
	out, err := p.run("pg_ctl", "-D", p.Dir, "-l", filepath.Join(p.Dir, "server.log"), "-w", "-t", "60",
		"-o", "-p "+strconv.Itoa(p.Port), "start")
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(p.Dir, "server.log"))
		return fmt.Errorf("pg_ctl start %s: %w\n%s\n%s", p.Dir, err, out, tail(log, 2000))
	}
	return nil
}

// Stop kills the server at once (pg_ctl stop -m immediate: no checkpoint,
// clients cut off, recovery at the next start), as a crash would.
func (p *Postgres) Stop() error {
	out, err := p.run("pg_ctl", "-D", p.Dir, "-m", "immediate", "-w", "stop")
	if err != nil {
		return fmt.Errorf("pg_ctl stop %s: %w\n%s", p.Dir, err, out)
	}
	return nil
}

// Close stops the server if running and removes its directory.
func (p *Postgres) Close() {
	p.run("pg_ctl", "-D", p.Dir, "-m", "immediate", "-w", "stop")
	os.RemoveAll(p.Dir)
}

// URL is the connection URL of database db as the superuser.
func (p *Postgres) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", p.Port, db)
}

// NewDatabase creates a database with a fresh name on the server whose
// superuser URL is admin and returns its URL.
func NewDatabase(ctx context.Context, admin string) (string, error) {
	cfg, err := pgx.ParseConfig(admin)
	if err != nil {
		return "", fmt.Errorf("new database on %s: %w", admin, err)
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return "", fmt.Errorf("new database on %s: %w", admin, err)
	}
	defer conn.Close(ctx)
	name := fmt.Sprintf("mfm_test_%d_%d", os.Getpid(), time.Now().UnixNano())
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	u, err := url.Parse(admin)
	if err != nil || u.Scheme == "" {
		return "", fmt.Errorf("new database: %q is not a postgres:// URL", admin)
	}
	u.Path = "/" + name
	return u.String(), nil
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
