package fleet

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/fleet/fleettest"
)

func TestMain(m *testing.M) { os.Exit(fleettest.Main(m)) }

// agentT is one agent of a test: its store, writer and running node.
type agentT struct {
	name  string
	store *episodes.Store
	w     *episodes.Writer
	node  *Node
	n     int // episodes written
}

type team struct {
	t    testing.TB
	pg   string
	s3   fleettest.S3Target
	logs *bytes.Buffer
}

func newTeam(t testing.TB) *team {
	return &team{t: t, pg: fleettest.PostgresURL(t), s3: fleettest.S3(t), logs: &bytes.Buffer{}}
}

func (tm *team) agent(name string, shareMine bool) *agentT {
	t := tm.t
	t.Helper()
	s, err := episodes.Init(filepath.Join(t.TempDir(), name))
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.OpenWriter()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	a := &agentT{name: name, store: s, w: w}
	a.start(tm, shareMine)
	return a
}

func (a *agentT) start(tm *team, shareMine bool) {
	tm.t.Helper()
	node, err := Start(Config{Store: a.store, Agent: a.name, Postgres: tm.pg, ShareMine: shareMine,
		Objects: ObjectsConfig{URL: tm.s3.URL("team"), Endpoint: tm.s3.Endpoint, Access: tm.s3.Access, Secret: tm.s3.Secret},
		Logger:  slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))})
	if err != nil {
		tm.t.Fatal(err)
	}
	a.node = node
	tm.t.Cleanup(func() { a.node.Close() })
}

func (a *agentT) record(t testing.TB, k int, tags ...string) []string {
	t.Helper()
	var ids []string
	for range k {
		id, err := fleettest.Episode(a.w, a.n, 2000+a.n, tags...)
		if err != nil {
			t.Fatal(err)
		}
		a.n++
		ids = append(ids, id)
	}
	return ids
}

// ownPostgres starts a PostgreSQL cluster for one test, which may stop and
// start it (the fault tests), and returns it with a fresh database's URL;
// the cluster is removed when the test ends.
func ownPostgres(t *testing.T) (*fleettest.Postgres, string) {
	t.Helper()
	pg, err := fleettest.StartPostgres(false)
	if err != nil {
		fleettest.Unavailable(t, err)
	}
	t.Cleanup(pg.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	url, err := fleettest.NewDatabase(ctx, pg.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	return pg, url
}

// waitFor polls cond until it holds or d passes.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	start := time.Now()
	defer func() { t.Logf("%s: %v", what, time.Since(start)) }()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func readLocal(t testing.TB, s *episodes.Store, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(s.Path(rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestShareBetweenAgents: two agents see each other's episodes under
// agents/NAME/ byte for byte as in the owner's store, new episodes arrive
// while running, and cue queries take agent:NAME and agent:all.
func TestShareBetweenAgents(t *testing.T) {
	tm := newTeam(t)
	alice, bob := tm.agent("alice", true), tm.agent("bob", false)
	alice.record(t, 1, "stuck")
	// A blank grid line is shipped like a row: the copy stays byte for byte.
	if err := alice.w.AppendGrid(nil); err != nil {
		t.Fatal(err)
	}
	alice.record(t, 2, "stuck")
	bob.record(t, 2)
	ctx := context.Background()
	waitFor(t, 20*time.Second, "bob to see alice's 3 episodes", func() bool { return bob.node.cat.count("alice", 1) == 3 })
	waitFor(t, 20*time.Second, "alice to see bob's 2 episodes", func() bool { return alice.node.cat.count("bob", 1) == 2 })

	tree := bob.node.Tree()
	names, err := tree.ReadDir(ctx, "")
	if err != nil || strings.Join(names, ",") != "alice/" {
		t.Fatalf("bob's agents/ = %v (err %v), want [alice/]", names, err)
	}
	// the same layout, byte for byte
	for _, rel := range []string{"index.jsonl", "grid.jsonl", "episodes/ep_000001/observation/image.png", "episodes/ep_000002/action.json"} {
		got, isDir, err := tree.Open(ctx, "alice/"+rel)
		if err != nil || isDir || !bytes.Equal(got, readLocal(t, alice.store, rel)) {
			t.Errorf("agents/alice/%s: %d bytes, dir %v, err %v; want alice's %d bytes", rel, len(got), isDir, err, len(readLocal(t, alice.store, rel)))
		}
	}
	eps, _ := tree.ReadDir(ctx, "alice/episodes")
	if strings.Join(eps, " ") != "ep_000000/ ep_000001/ ep_000002/" {
		t.Errorf("agents/alice/episodes = %v", eps)
	}
	files, _ := tree.ReadDir(ctx, "alice/episodes/ep_000001")
	if strings.Join(files, " ") != "action.json observation/ outcome.json state/" {
		t.Errorf("agents/alice/episodes/ep_000001 = %v", files)
	}
	if _, _, err := tree.Open(ctx, "alice/episodes/ep_000009"); !isNotExist(err) {
		t.Errorf("missing episode: err %v, want not-exist", err)
	}
	if _, _, err := tree.Open(ctx, "carol"); !isNotExist(err) {
		t.Errorf("unknown agent: err %v, want not-exist", err)
	}
	// the frame is cached after the first read
	cached := filepath.Join(bob.store.Root, ".mfm", "fleet", "cache", "alice", "life_1", "episodes", "ep_000001", "observation", "image.png")
	if _, err := os.Stat(cached); err != nil {
		t.Errorf("frame not cached: %v", err)
	}

	// alice's notes, shared
	if err := os.MkdirAll(alice.store.Path("mine"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(alice.store.Path("mine", "notes.md"), []byte("the shaft at ep_000001 traps you\n"), 0o644)
	waitFor(t, 20*time.Second, "alice's notes in agents/alice/mine/", func() bool {
		b, _, err := tree.Open(ctx, "alice/mine/notes.md")
		return err == nil && string(b) == "the shaft at ep_000001 traps you\n"
	})

	// a new episode while running
	alice.record(t, 1, "damage")
	waitFor(t, 20*time.Second, "alice's 4th episode", func() bool {
		_, _, err := tree.Open(ctx, "alice/episodes/ep_000003/outcome.json")
		return err == nil
	})

	// queries
	q := bob.node.Querier(localStub{rows: [][]byte{[]byte(`{"id": "ep_000000", "time": "2000-01-01T00:00:00Z"}`)}, dirs: []string{"episodes/ep_000000"}})
	tests := []struct {
		query string
		dirs  string
	}{
		{"agent:alice tag:stuck", "agents/alice/episodes/ep_000000 agents/alice/episodes/ep_000001 agents/alice/episodes/ep_000002"},
		{"agent:alice tag:stuck last:1", "agents/alice/episodes/ep_000002"},
		{"agent:alice -tag:stuck", "agents/alice/episodes/ep_000003"},
		{"agent:alice dig down", "agents/alice/episodes/ep_000001"},
		{"agent:alice action:pillar_up", "agents/alice/episodes/ep_000002"},
		{"agent:alice steps:15..25", "agents/alice/episodes/ep_000001 agents/alice/episodes/ep_000002"},
		{"agent:alice near:1.5,-2.5 r:0.1", "agents/alice/episodes/ep_000001"},
		{"agent:alice \"moved 9\"", ""},
		{"agent:all last:2", "agents/alice/episodes/ep_000002 agents/alice/episodes/ep_000003"},
		{"agent:all tag:nothing", "episodes/ep_000000"}, // the stub answers every local query with its row
		{"agent:bob", "episodes/ep_000000"},             // this agent: the local index
	}
	for _, tt := range tests {
		rows, dirs, err := q.Query(ctx, tt.query)
		if err != nil {
			t.Errorf("%q: %v", tt.query, err)
			continue
		}
		if got := strings.Join(dirs, " "); got != tt.dirs || len(rows) != len(dirs) {
			t.Errorf("%q: dirs %q (%d rows), want %q", tt.query, got, len(rows), tt.dirs)
		}
	}
	for _, bad := range []struct{ query, msg string }{
		{"agent:carol", "no episode of this agent"},
		{"agent:alice in:mine", "in:mine"},
		{"agent:Alice", "agent name"},
	} {
		if _, _, err := q.Query(ctx, bad.query); err == nil || !strings.Contains(err.Error(), bad.msg) {
			t.Errorf("%q: err %v, want one saying %q", bad.query, err, bad.msg)
		}
	}
	// explain counts the agents' rows the query names, term by term.
	explain := bob.node.Explainer(func(context.Context, string) ([]byte, error) { return []byte("local\n"), nil })
	for _, tt := range []struct{ query, want string }{
		{"agent:alice tag:stuck", "count: 3\n"},
		{"agent:alice tag:stuck last:2", "count: 2\n"},
		{"agent:all tag:stuck", "count: 3\n"},
		{"agent:all", "count: 6\n"},
		{"agent:bob", "count: 2\n"},
		{"tag:stuck", "local\n"},
	} {
		b, err := explain(ctx, tt.query)
		if err != nil || !strings.HasSuffix(string(b), tt.want) {
			t.Errorf("explain %q = %q (err %v), want it to end %q", tt.query, b, err, tt.want)
		}
	}
	if b, _ := explain(ctx, "agent:all tag:stuck"); !strings.Contains(string(b), "start → 6  (index rows in bob: life 1, the current life; alice: life 1, the current life)") {
		t.Errorf("explain agent:all names whose rows it counts:\n%s", b)
	}
	for _, bad := range []string{"agent:carol", "agent:alice in:mine"} {
		if _, err := explain(ctx, bad); err == nil {
			t.Errorf("explain %q: no error", bad)
		}
	}
	if _, _, err := RefuseAgents(localStub{}).Query(ctx, "agent:alice"); err == nil || !strings.Contains(err.Error(), "not shared") {
		t.Errorf("unshared mount, agent:alice: err %v", err)
	}
}

type localStub struct {
	rows [][]byte
	dirs []string
}

func (l localStub) Query(context.Context, string) ([][]byte, []string, error) {
	return l.rows, l.dirs, nil
}
func (l localStub) Grammar() string { return "" }

// countRows is the number of mfm_episodes rows of agent, and of distinct ids.
func countRows(t testing.TB, url, agent string) (rows, distinct int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return -1, -1
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, `SELECT count(*), count(DISTINCT (life, id)) FROM mfm_episodes WHERE agent = $1`, agent).Scan(&rows, &distinct); err != nil {
		return -1, -1
	}
	return rows, distinct
}

// TestResumeAfterKill: a daemon stopped at any point (here: its watermark
// lost, as if killed between the insert and the watermark write) ships
// again from where it was and the database keeps each episode once.
func TestResumeAfterKill(t *testing.T) {
	tm := newTeam(t)
	alice := tm.agent("alice", false)
	alice.record(t, 5)
	waitFor(t, 20*time.Second, "5 rows shipped", func() bool { r, _ := countRows(t, tm.pg, "alice"); return r == 5 })
	alice.node.Close()
	mark := filepath.Join(alice.store.Root, ".mfm", "fleet", "shipped.json")
	b, err := os.ReadFile(mark)
	if err != nil || !strings.Contains(string(b), `"agent":"alice"`) {
		t.Fatalf("watermark %s: %q, %v", mark, b, err)
	}
	if err := os.Remove(mark); err != nil {
		t.Fatal(err)
	}
	alice.record(t, 2) // recorded while the daemon is down
	alice.start(tm, false)
	waitFor(t, 20*time.Second, "7 rows shipped", func() bool { r, _ := countRows(t, tm.pg, "alice"); return r == 7 })
	waitFor(t, 20*time.Second, "the watermark to catch up", func() bool {
		b, _ := os.ReadFile(mark)
		st, _ := os.Stat(alice.store.Path("index.jsonl"))
		return st != nil && strings.Contains(string(b), fmt.Sprintf(`"index":%d`, st.Size()))
	})
	if r, d := countRows(t, tm.pg, "alice"); r != 7 || d != 7 {
		t.Fatalf("after re-shipping everything: %d rows, %d distinct, want 7 and 7", r, d)
	}
	if n, err := alice.node.ShipStatus(); n != 2 || err != nil {
		t.Errorf("second daemon inserted %d (err %v), want 2: the other 5 were there", n, err)
	}
	// a store that belongs to another agent name is refused
	if _, err := Start(Config{Store: alice.store, Agent: "mallory", Postgres: tm.pg, Objects: ObjectsConfig{URL: tm.s3.URL("team"), Endpoint: tm.s3.Endpoint}}); err == nil || !strings.Contains(err.Error(), "one store is one agent") {
		t.Errorf("start as another agent: %v", err)
	}
}

func TestStartErrors(t *testing.T) {
	s, err := episodes.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cfg Config
		msg string
	}{
		{Config{Store: s, Agent: "all", Postgres: "postgres://x/y", Objects: ObjectsConfig{URL: "s3://b/p", Endpoint: "http://h:1"}}, "agent name"},
		{Config{Store: s, Agent: "a", Postgres: "postgres://x/y", Objects: ObjectsConfig{URL: "http://b/p", Endpoint: "http://h:1"}}, "s3://BUCKET"},
		{Config{Store: s, Agent: "a", Postgres: "postgres://x/y", Objects: ObjectsConfig{URL: "s3://b/p", Endpoint: "ftp://h"}}, "http://HOST:PORT"},
		{Config{Store: s, Agent: "a", Postgres: "mysql://x", Objects: ObjectsConfig{URL: "s3://b/p", Endpoint: "http://h:1"}}, "postgres://"},
	} {
		n, err := Start(c.cfg)
		if err == nil {
			n.Close()
		}
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%+v: err %v, want one saying %q", c.cfg, err, c.msg)
		}
	}
}

// TestSeedRows: seeded history rows reach a follower and its queries like
// shipped ones (with empty episode directories: they have no files).
func TestSeedRows(t *testing.T) {
	tm := newTeam(t)
	ctx := context.Background()
	if err := CreateSchema(ctx, tm.pg); err != nil {
		t.Fatal(err)
	}
	var rows [][]byte
	for n := range 300 {
		var tags []string
		if n%100 == 0 {
			tags = []string{"death"}
		}
		r, err := fleettest.Row(episodes.EpisodeID(int64(n)), n, tags...)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	if err := SeedRows(ctx, tm.pg, "hist", 1, rows); err != nil {
		t.Fatal(err)
	}
	if err := SeedRows(ctx, tm.pg, "hist", 1, rows[:1]); err == nil {
		t.Error("seeding a row twice succeeded")
	}
	bob := tm.agent("bob", false)
	<-bob.node.Ready()
	if n := bob.node.cat.count("hist", 1); n != 300 {
		t.Fatalf("follower holds %d seeded rows, want 300", n)
	}
	_, dirs, err := bob.node.Querier(localStub{}).Query(ctx, "agent:hist tag:death")
	if err != nil || strings.Join(dirs, " ") != "agents/hist/episodes/ep_000000 agents/hist/episodes/ep_000100 agents/hist/episodes/ep_000200" {
		t.Fatalf("agent:hist tag:death = %v, %v", dirs, err)
	}
	names, err := bob.node.Tree().ReadDir(ctx, "hist/episodes/ep_000100")
	if err != nil || len(names) != 0 {
		t.Errorf("seeded episode directory = %v, %v; want empty", names, err)
	}
}

// TestLives: an agent's earlier life appears under agents/NAME/previous/
// and its new life as agents/NAME/, each with its own episodes.
func TestLives(t *testing.T) {
	tm := newTeam(t)
	alice, bob := tm.agent("alice", false), tm.agent("bob", false)
	alice.record(t, 2)
	if _, err := alice.w.NewLife(); err != nil {
		t.Fatal(err)
	}
	alice.record(t, 3, "death")
	ctx := context.Background()
	tree := bob.node.Tree()
	waitFor(t, 20*time.Second, "both lives shipped", func() bool {
		return bob.node.cat.count("alice", 1) == 2 && bob.node.cat.count("alice", 2) == 3
	})
	for _, c := range []struct{ dir, want string }{
		{"alice", "episodes/ grid.jsonl index.jsonl previous/"},
		{"alice/previous", "life_1/"},
		{"alice/previous/life_1/episodes", "ep_000000/ ep_000001/"},
		{"alice/episodes", "ep_000000/ ep_000001/ ep_000002/"},
	} {
		got, err := tree.ReadDir(ctx, c.dir)
		slicesSort(got)
		if err != nil || strings.Join(got, " ") != c.want {
			t.Errorf("agents/%s = %v (err %v), want %s", c.dir, got, err, c.want)
		}
	}
	for _, rel := range []string{"previous/life_1/index.jsonl", "previous/life_1/episodes/ep_000001/observation/image.png", "index.jsonl", "episodes/ep_000002/observation/image.png"} {
		got, _, err := tree.Open(ctx, "alice/"+rel)
		if err != nil || !bytes.Equal(got, readLocal(t, alice.store, rel)) {
			t.Errorf("agents/alice/%s: %d bytes, err %v: not alice's", rel, len(got), err)
		}
	}
	q := bob.node.Querier(localStub{})
	for _, c := range []struct{ query, want string }{
		{"agent:alice tag:death last:1", "agents/alice/episodes/ep_000002"},
		{"agent:alice life:1", "agents/alice/previous/life_1/episodes/ep_000000 agents/alice/previous/life_1/episodes/ep_000001"},
		{"agent:alice life:all -tag:death", "agents/alice/previous/life_1/episodes/ep_000000 agents/alice/previous/life_1/episodes/ep_000001"},
	} {
		_, dirs, err := q.Query(ctx, c.query)
		if err != nil || strings.Join(dirs, " ") != c.want {
			t.Errorf("%q = %v (err %v), want %s", c.query, dirs, err, c.want)
		}
	}
}

func slicesSort(s []string) { sort.Strings(s) }

// TestShipOnIndexWrite: an episode is shipped when its row is written to
// index.jsonl, not at the next poll (here an hour away), and reaches the
// other agent's tree through NOTIFY (OnShipped and OnFollowed report it).
func TestShipOnIndexWrite(t *testing.T) {
	tm := newTeam(t)
	s, err := episodes.Init(filepath.Join(t.TempDir(), "alice"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.OpenWriter()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	shipped := make(chan string, 10)
	followed := make(chan string, 10)
	objs := ObjectsConfig{URL: tm.s3.URL("team"), Endpoint: tm.s3.Endpoint, Access: tm.s3.Access, Secret: tm.s3.Secret}
	quiet := slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))
	alice, err := Start(Config{Store: s, Agent: "alice", Postgres: tm.pg, Objects: objs, Poll: time.Hour, Logger: quiet,
		OnShipped: func(life int, id string) { shipped <- id }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(alice.Close)
	bs, err := episodes.Init(filepath.Join(t.TempDir(), "bob"))
	if err != nil {
		t.Fatal(err)
	}
	bob, err := Start(Config{Store: bs, Agent: "bob", Postgres: tm.pg, Objects: objs, Poll: time.Hour, Logger: quiet,
		OnFollowed: func(agent string, life int, id string) { followed <- agent + "/" + id }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bob.Close)
	<-alice.Ready()
	<-bob.Ready()
	// The first cycle (at start) found nothing; from now on only a write
	// to index.jsonl can start one within the test's time.
	waitFor(t, 10*time.Second, "alice's shipper idle", func() bool {
		n, err := alice.ShipStatus()
		return n == 0 && err == nil
	})
	id, err := fleettest.Episode(w, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ch   chan string
		want string
	}{{shipped, id}, {followed, "alice/" + id}} {
		select {
		case got := <-c.ch:
			if got != c.want {
				t.Fatalf("reported %s, want %s", got, c.want)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s not reported within 20 s (the poll is an hour)", c.want)
		}
	}
	if _, _, err := bob.Tree().Open(context.Background(), "alice/episodes/"+id+"/outcome.json"); err != nil {
		t.Fatalf("bob's tree: %v", err)
	}
}

// TestNewLifeMidShip: a life that moves to previous/ while one of its
// episodes is being shipped (here: between reading the row and reading the
// files, and the next life already has an episode of the same id) is
// shipped with its own files, not the next life's.
func TestNewLifeMidShip(t *testing.T) {
	tm := newTeam(t)
	alice, bob := tm.agent("alice", false), tm.agent("bob", false)
	alice.node.Close() // restarted below with the hook
	var once sync.Once
	alice.node = nil
	node, err := Start(Config{Store: alice.store, Agent: "alice", Postgres: tm.pg,
		Objects: ObjectsConfig{URL: tm.s3.URL("team"), Endpoint: tm.s3.Endpoint, Access: tm.s3.Access, Secret: tm.s3.Secret},
		Logger:  slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	alice.node = node
	recorded := make(chan struct{}) // the writer is alice's harness: one user at a time
	node.ship.beforeEpisode = func(life int, id string) {
		if life == 1 && id == "ep_000001" {
			once.Do(func() {
				// The life moves on and its successor records ep_000000
				// and ep_000001 before this episode's files are read.
				// The row may be seen before the writer has finished
				// with it (its fsync), so the life moves on after that.
				select {
				case <-recorded:
				case <-time.After(20 * time.Second):
					t.Error("life 1 not recorded after 20 s")
					return
				}
				if _, err := alice.w.NewLife(); err != nil {
					t.Error(err)
				}
				alice.record(t, 2)
			})
		}
	}
	alice.record(t, 2)
	close(recorded)
	waitFor(t, 20*time.Second, "both lives shipped", func() bool {
		return bob.node.cat.count("alice", 1) == 2 && bob.node.cat.count("alice", 2) == 2
	})
	ctx := context.Background()
	for _, rel := range []string{"previous/life_1/episodes/ep_000001/observation/image.png", "episodes/ep_000001/observation/image.png"} {
		got, _, err := bob.node.Tree().Open(ctx, "alice/"+rel)
		if err != nil || !bytes.Equal(got, readLocal(t, alice.store, rel)) {
			t.Errorf("agents/alice/%s: %d bytes, err %v: not alice's", rel, len(got), err)
		}
	}
}

// TestSchemaNeedsExtension: a role that may not create the btree_gist
// extension gets an error saying what is needed, not a bare permission
// error, and nothing is created.
func TestSchemaNeedsExtension(t *testing.T) {
	url := fleettest.PostgresURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	role := fmt.Sprintf("mfm_weak_%d", time.Now().UnixNano()%1e9)
	for _, q := range []string{
		"CREATE ROLE " + role + " LOGIN",
		"REVOKE CREATE ON DATABASE " + pgx.Identifier{conn.Config().Database}.Sanitize() + " FROM PUBLIC",
		"GRANT USAGE, CREATE ON SCHEMA public TO " + role,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	weak := strings.Replace(url, "postgres://postgres@", "postgres://"+role+"@", 1)
	err = CreateSchema(ctx, weak)
	if err == nil || !strings.Contains(err.Error(), "btree_gist extension") || !strings.Contains(err.Error(), "owner") {
		t.Fatalf("schema by a role without CREATE on the database: %v", err)
	}
	var tables int
	conn.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE tablename LIKE 'mfm_%'`).Scan(&tables)
	if tables != 0 {
		t.Errorf("%d tables created before the error", tables)
	}
}
