// Command sharedbench measures shared memory on loopback (bench/shared.md):
// K agents recording at once over H shared history rows, each shipping to
// PostgreSQL and versitygw; agent 0's real mount observes the others.
// It reports episode close -> visible in agent 0's mount (p50, p99, split
// at the row's commit), cue queries with agent:all through the mount and
// in process beside the local cue index over the same rows, and frames of
// another agent read cold (object store) and cached beside local frames.
// Run as root (it mounts): go run ./bench/sharedbench -agents 2,4,8
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/fleet"
	"github.com/mfm-project/mfm/fleet/fleettest"
	mfmfs "github.com/mfm-project/mfm/fs"
	"github.com/mfm-project/mfm/index"
)

var (
	agentsFlag   = flag.String("agents", "2,4,8", "numbers of agents recording at once, one run each")
	rowsFlag     = flag.Int("rows", 100000, "shared history rows seeded before each run")
	dur          = flag.Duration("duration", 15*time.Second, "recording time per run")
	rate         = flag.Float64("rate", 5, "episodes per second per agent")
	frameSize    = flag.Int("frame", 50000, "bytes of each episode's frame")
	nq           = flag.Int("queries", 60, "runs of each query")
	nframes      = flag.Int("frames", 200, "frames read per kind")
	dirFlag      = flag.String("dir", "/dev/shm", "where the stores go")
	arrivalsFlag = flag.String("arrivals", "poisson", "when each agent closes its episodes: poisson (independent agents: exponential gaps at the rate, seeded by the agent's number) or lockstep (every agent at the same instants, the rate's period apart)")
	processFlag  = flag.Bool("mount-process", true, "run agent 0's mount as its own `mfmd mount --shared` process, as an agent runs it (its harness, the other agents' nodes and this bench share this process); false: mount it in this process, which also splits commit -> visible at agent 0's follower")
	rawFlag      = flag.String("raw", "", "append each observed episode's times to this CSV file (agents, agent, id, close unix µs, close->commit µs, commit->visible µs, commit->tree µs)")
	localFlag    = flag.Bool("local", true, "also measure the local cue index over the same rows (the baseline)")
)

func main() {
	flag.Parse()
	if *arrivalsFlag != "poisson" && *arrivalsFlag != "lockstep" {
		log.Fatalf("-arrivals %q: want poisson or lockstep", *arrivalsFlag)
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	pg, err := fleettest.StartPostgres(true)
	if err != nil {
		log.Fatal(err)
	}
	defer pg.Close()
	s3, err := fleettest.StartS3()
	if err != nil {
		log.Fatal(err)
	}
	defer s3.Close()
	hist := history(*rowsFlag)
	fmt.Printf("# sharedbench: %d history rows, %v recording at %.0f episodes/s per agent, frames of %d bytes\n\n", *rowsFlag, *dur, *rate, *frameSize)
	if *localFlag {
		localQueries(hist)
	}
	for _, f := range strings.Split(*agentsFlag, ",") {
		k, err := strconv.Atoi(f)
		if err != nil || k < 2 {
			log.Fatalf("-agents: %q is not a number >= 2", f)
		}
		if err := run(pg, s3, k, hist); err != nil {
			log.Fatal(err)
		}
	}
}

const histAgents = 4

// history is rows of histAgents agents, rows/histAgents each.
func history(rows int) [][][]byte {
	out := make([][][]byte, histAgents)
	per := rows / histAgents
	for a := range histAgents {
		for n := range per {
			var tags []string
			if n%10 == 0 {
				tags = append(tags, "stuck")
			}
			if n%7 == 0 {
				tags = append(tags, "damage")
			}
			r, err := fleettest.Row(episodes.EpisodeID(int64(n)), n+a*per, tags...)
			if err != nil {
				log.Fatal(err)
			}
			out[a] = append(out[a], r)
		}
	}
	return out
}

var queries = []string{
	"tag:stuck last:%d",
	"dig down last:%d",
	"near:10,-20 r:8 last:%d",
	"tag:damage steps:1000..50000 last:%d",
	"tag:damage steps:1000..200000 last:%d", // a wide range, all of it old
}

// localQueries: the same queries over the same rows in one local store,
// answered by the cue index (the baseline).
func localQueries(hist [][][]byte) {
	dir, err := os.MkdirTemp(*dirFlag, "mfm-sharedbench-local-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	s, err := episodes.Init(dir)
	if err != nil {
		log.Fatal(err)
	}
	a, err := episodes.OpenAppender(s.Path(episodes.IndexFileName))
	if err != nil {
		log.Fatal(err)
	}
	for _, rows := range hist {
		for _, r := range rows {
			a.Append(r)
		}
	}
	a.Close()
	start := time.Now()
	x, _, err := index.Open(context.Background(), s, index.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer x.Close()
	fmt.Printf("local cue index over the same %d rows built in %v\n\n", len(hist)*len(hist[0]), time.Since(start).Round(time.Millisecond))
	q := &index.Querier{Searcher: x}
	fmt.Println("| query (local store, in process) | p50 | p99 |")
	fmt.Println("| --- | --- | --- |")
	for _, qs := range queries {
		var d []time.Duration
		for i := range *nq {
			st := time.Now()
			if _, _, err := q.Query(context.Background(), fmt.Sprintf(qs, 20+i)); err != nil {
				log.Fatal(err)
			}
			d = append(d, time.Since(st))
		}
		p50, p99 := pct(d)
		fmt.Printf("| `%s` | %s | %s |\n", fmt.Sprintf(qs, 20), ms(p50), ms(p99))
	}
	fmt.Println()
}

// arrivals returns a function that waits until agent i's next episode
// closes.
func arrivals(i int) func() {
	period := time.Duration(float64(time.Second) / *rate)
	if *arrivalsFlag == "lockstep" {
		tick := time.NewTicker(period)
		return func() { <-tick.C }
	}
	rng := rand.New(rand.NewPCG(uint64(i), 1))
	at := time.Now()
	return func() {
		at = at.Add(time.Duration(rng.ExpFloat64() * float64(period)))
		time.Sleep(time.Until(at))
	}
}

type closed struct {
	agent, id string
	at        time.Time
}

func run(pg *fleettest.Postgres, s3 *fleettest.S3Server, k int, hist [][][]byte) error {
	ctx := context.Background()
	url, err := fleettest.NewDatabase(ctx, pg.URL("postgres"))
	if err != nil {
		return err
	}
	tg := fleettest.S3Target{Endpoint: s3.Endpoint(), Access: fleettest.S3Access, Secret: fleettest.S3Secret, Bucket: fmt.Sprintf("bench-%d-%d", k, time.Now().Unix())}
	if err := fleettest.MakeBucket(ctx, tg); err != nil {
		return err
	}
	if err := fleet.CreateSchema(ctx, url); err != nil {
		return err
	}
	st := time.Now()
	for a, rows := range hist {
		if err := fleet.SeedRows(ctx, url, fmt.Sprintf("hist-%d", a), 1, rows); err != nil {
			return err
		}
	}
	seedTime := time.Since(st)
	root, err := os.MkdirTemp(*dirFlag, "mfm-sharedbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	type agent struct {
		name  string
		store *episodes.Store
		w     *episodes.Writer
		node  *fleet.Node
	}
	// When each episode's row was committed (its shipper) and reached
	// agent 0's agents/ tree (agent 0's follower).
	var hookMu sync.Mutex
	committed := map[string]time.Time{}
	followed := map[string]time.Time{}
	// A poller stats an episode's path only once its row is committed:
	// polling from the close would put thousands of FUSE lookups a
	// second on the 2 cores the measured path runs on.
	commitSignals := map[string]chan struct{}{}
	commitSignal := func(key string) chan struct{} {
		c := commitSignals[key]
		if c == nil {
			c = make(chan struct{})
			commitSignals[key] = c
		}
		return c
	}
	runtime.GC()
	var mem0 runtime.MemStats
	runtime.ReadMemStats(&mem0) // before the nodes: the history and the rest of the bench
	agents := make([]*agent, k)
	for i := range agents {
		name := fmt.Sprintf("a%d", i)
		s, err := episodes.Init(filepath.Join(root, name))
		if err != nil {
			return err
		}
		w, err := s.OpenWriter()
		if err != nil {
			return err
		}
		cfg := fleet.Config{Store: s, Agent: name, Postgres: url,
			Objects: fleet.ObjectsConfig{URL: tg.URL("team"), Endpoint: tg.Endpoint, Access: tg.Access, Secret: tg.Secret},
			OnShipped: func(life int, id string) {
				now := time.Now()
				hookMu.Lock()
				if _, again := committed[name+"/"+id]; !again {
					committed[name+"/"+id] = now
					close(commitSignal(name + "/" + id))
				}
				hookMu.Unlock()
			}}
		if i == 0 && *processFlag {
			agents[i] = &agent{name: name, store: s, w: w}
			defer w.Close()
			continue
		}
		if i == 0 {
			cfg.OnFollowed = func(agent string, life int, id string) {
				now := time.Now()
				hookMu.Lock()
				followed[agent+"/"+id] = now
				hookMu.Unlock()
			}
		}
		n, err := fleet.Start(cfg)
		if err != nil {
			return err
		}
		agents[i] = &agent{name: name, store: s, w: w, node: n}
		defer n.Close()
		defer w.Close()
	}
	st = time.Now()
	nodes := 0
	for _, a := range agents {
		if a.node != nil {
			<-a.node.Ready()
			nodes++
		}
	}
	loadTime := time.Since(st)
	// What the followers hold in memory: the live heap the nodes added,
	// per follower and shared row (each holds every other agent's rows;
	// the history dominates).
	runtime.GC()
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	held := float64(mem.HeapAlloc) - float64(mem0.HeapAlloc)
	heapPerRow := held / float64(nodes) / float64(max(1, len(hist)*len(hist[0])))
	mnt := filepath.Join(root, "mnt0")
	os.Mkdir(mnt, 0o755)
	// Agent 0's mount, and the node whose querier answers the in-process
	// queries (agent 0's, or with its mount in a process of its own,
	// agent 1's: agent:all is the same rows less each one's own).
	qnode, qstore := agents[0].node, agents[0].store
	var mountRSS string
	if *processFlag {
		qnode, qstore = agents[1].node, agents[1].store
		stop, rss, err := mountProcess(ctx, agents[0].store.Root, mnt, url, tg, len(hist), len(hist[0]))
		if err != nil {
			return err
		}
		defer stop()
		mountRSS = fmt.Sprintf("; agent 0's `mfmd mount` process after the load: %s RSS", rss)
	} else {
		mctx, mcancel := context.WithCancel(ctx)
		defer mcancel()
		srv, err := mfmfs.Mount(mctx, agents[0].store, mnt, mfmfs.Options{NoAccessLog: true,
			Hooks: mfmfs.Hooks{
				Trees:   map[string]mfmfs.VirtualTree{fleet.TreeName: agents[0].node.Tree()},
				Querier: agents[0].node.Querier(&index.Querier{Searcher: index.Scan{Store: agents[0].store}}),
			}})
		if err != nil {
			return err
		}
		defer srv.Unmount()
	}

	// Record at once; agent 0's mount watches for every other agent's episode.
	var mu sync.Mutex
	var closes []closed
	visible := map[string]time.Duration{}
	var pollers sync.WaitGroup
	stop := time.Now().Add(*dur)
	var rec sync.WaitGroup
	for i, a := range agents {
		rec.Add(1)
		go func() {
			defer rec.Done()
			next := arrivals(i)
			for n := 0; time.Now().Before(stop); n++ {
				next()
				var tags []string
				if n%3 == 0 {
					tags = []string{"stuck"}
				}
				id, err := fleettest.Episode(a.w, n, *frameSize, tags...)
				if err != nil {
					log.Fatal(err)
				}
				at := time.Now()
				if i == 0 {
					continue
				}
				mu.Lock()
				closes = append(closes, closed{a.name, id, at})
				mu.Unlock()
				p := filepath.Join(mnt, "agents", a.name, "episodes", id)
				hookMu.Lock()
				shipped := commitSignal(a.name + "/" + id)
				hookMu.Unlock()
				pollers.Add(1)
				go func() {
					defer pollers.Done()
					deadline := at.Add(30 * time.Second)
					select {
					case <-shipped:
					case <-time.After(time.Until(deadline)):
						return
					}
					for time.Now().Before(deadline) {
						if _, err := os.Stat(p); err == nil {
							mu.Lock()
							visible[a.name+"/"+id] = time.Since(at)
							mu.Unlock()
							return
						}
						// time.Sleep of 0.2 ms takes ~1 ms here (the
						// runtime's timer resolution); nanosleep
						// holds the thread for about what it is asked.
						syscall.Nanosleep(&syscall.Timespec{Nsec: 200_000}, nil)
					}
				}()
			}
		}()
	}
	rec.Wait()
	pollers.Wait()

	// Split at the row's commit (the shipper's commit returned) and at the
	// row reaching agent 0's tree (its follower added it).
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var toCommit, toTree, toStat, shipToSee, total []time.Duration
	var raw *os.File
	if *rawFlag != "" {
		if raw, err = os.OpenFile(*rawFlag, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err != nil {
			return err
		}
		defer raw.Close()
	}
	lost := 0
	hookMu.Lock()
	for _, c := range closes {
		key := c.agent + "/" + c.id
		v, ok := visible[key]
		if !ok {
			lost++
			continue
		}
		total = append(total, v)
		cm, ok := committed[key]
		if !ok {
			continue
		}
		seen := c.at.Add(v)
		toCommit = append(toCommit, cm.Sub(c.at))
		shipToSee = append(shipToSee, seen.Sub(cm))
		fo, split := followed[key]
		if split {
			toTree = append(toTree, fo.Sub(cm))
			toStat = append(toStat, seen.Sub(fo))
		}
		if raw != nil {
			tree := "" // the split at the follower: in-process mounts only
			if split {
				tree = fmt.Sprint(fo.Sub(cm).Microseconds())
			}
			fmt.Fprintf(raw, "%d,%s,%s,%d,%d,%d,%s\n", k, c.agent, c.id, c.at.UnixMicro(), cm.Sub(c.at).Microseconds(), seen.Sub(cm).Microseconds(), tree)
		}
	}
	hookMu.Unlock()
	var rows int
	conn.QueryRow(ctx, `SELECT count(*) FROM mfm_episodes`).Scan(&rows)
	fmt.Printf("## %d agents recording at once (%d episodes recorded by the observed agents, %d shared rows at the end; history seeded in %v, loaded by each follower in %v; the live heap of this process's %d nodes after the load %.0f MB, %.0f bytes per follower and row%s)\n\n",
		k, len(closes), rows, seedTime.Round(time.Millisecond), loadTime.Round(time.Millisecond), nodes, held/1e6, heapPerRow, mountRSS)
	fmt.Println("| episode close -> | p50 | p99 | max |")
	fmt.Println("| --- | --- | --- | --- |")
	for _, r := range []struct {
		name string
		d    []time.Duration
	}{
		{"row committed (the shipper's commit returned; poll, PUTs, insert, commit)", toCommit},
		{"commit -> row in agent 0's agents/ tree (NOTIFY, the follower's read)", toTree},
		{"in the tree -> `stat` finds it in agent 0's mount (FUSE lookups, the poller's 0.2 ms)", toStat},
		{"**commit -> visible in agent 0's mount** (the 10 ms target)", shipToSee},
		{"visible in agent 0's mount (total)", total},
	} {
		if len(r.d) == 0 {
			continue
		}
		p50, p99 := pct(r.d)
		fmt.Printf("| %s | %s | %s | %s |\n", r.name, ms(p50), ms(p99), ms(slices.Max(r.d)))
	}
	if lost > 0 {
		fmt.Printf("\n%d episodes not visible within 30 s\n", lost)
	}
	fmt.Println()

	// Cue queries with agent:all through the mount (a new query string
	// each run: the mount caches results per string) and in process.
	q := qnode.Querier(&index.Querier{Searcher: index.Scan{Store: qstore}})
	fmt.Println("| query (N = 20, 21, …: a new string each run) | through the mount p50 | p99 | in process p50 | matches (N = 20) |")
	fmt.Println("| --- | --- | --- | --- | --- |")
	for _, qs := range queries {
		qa := "agent:all " + qs
		var dm, dp []time.Duration
		var matches int
		for i := range *nq {
			s := fmt.Sprintf(qa, 20+i)
			t0 := time.Now()
			b, err := os.ReadFile(filepath.Join(mnt, "q", s, "results.jsonl"))
			if err != nil {
				return fmt.Errorf("query %q through the mount: %w", s, err)
			}
			dm = append(dm, time.Since(t0))
			if i == 0 {
				matches = bytes.Count(b, []byte("\n"))
			}
			t0 = time.Now()
			if _, _, err := q.Query(ctx, s); err != nil {
				return err
			}
			dp = append(dp, time.Since(t0))
		}
		m50, m99 := pct(dm)
		p50, _ := pct(dp)
		fmt.Printf("| `%s` | %s | %s | %s | %d |\n", fmt.Sprintf(qa, 20), ms(m50), ms(m99), ms(p50), matches)
	}
	fmt.Println()

	// Frames: another agent's through the mount, cold then cached, beside
	// agent 0's own (through its mount's episodes/ and natively).
	var cold, cached, ownMount, native []time.Duration
	var names []string
	if ents, err := os.ReadDir(filepath.Join(mnt, "agents", "a1", "episodes")); err == nil {
		for _, e := range ents {
			names = append(names, e.Name())
		}
	}
	own, _ := os.ReadDir(agents[0].store.Path(episodes.EpisodesDir))
	n := min(*nframes, len(names), len(own))
	for i := range n {
		id := names[i]
		p := filepath.Join(mnt, "agents", "a1", "episodes", id, "observation", "image.png")
		for _, d := range []*[]time.Duration{&cold, &cached} {
			t0 := time.Now()
			b, err := os.ReadFile(p)
			if err != nil || len(b) != *frameSize {
				return fmt.Errorf("frame %s: %d bytes, %v", p, len(b), err)
			}
			*d = append(*d, time.Since(t0))
		}
		rel := filepath.Join(episodes.EpisodesDir, own[i].Name(), "observation", "image.png")
		t0 := time.Now()
		if _, err := os.ReadFile(filepath.Join(mnt, rel)); err != nil {
			return err
		}
		ownMount = append(ownMount, time.Since(t0))
		t0 = time.Now()
		if _, err := os.ReadFile(agents[0].store.Path(rel)); err != nil {
			return err
		}
		native = append(native, time.Since(t0))
	}
	fmt.Printf("| frame read (%d frames of %d bytes) | p50 | p99 |\n", n, *frameSize)
	fmt.Println("| --- | --- | --- |")
	for _, r := range []struct {
		name string
		d    []time.Duration
	}{{"another agent's, cold (object store -> cache)", cold}, {"another agent's, cached", cached}, {"own, through the mount", ownMount}, {"own, native file", native}} {
		p50, p99 := pct(r.d)
		fmt.Printf("| %s | %s | %s |\n", r.name, ms(p50), ms(p99))
	}
	fmt.Println()
	return nil
}

func pct(d []time.Duration) (p50, p99 time.Duration) {
	if len(d) == 0 {
		return 0, 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)*50/100], s[min(len(s)-1, len(s)*99/100)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

// mountProcess builds mfmd and mounts store at mnt as agent a0 with
// --shared, in a process of its own, and waits until its follower has
// loaded the history (agents hist-0 … of rows each). stop unmounts it.
func mountProcess(ctx context.Context, store, mnt, url string, tg fleettest.S3Target, agents, rows int) (stop func(), rss string, err error) {
	bin := filepath.Join(filepath.Dir(store), "mfmd")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/mfm-project/mfm/cmd/mfmd").CombinedOutput(); err != nil {
		return nil, "", fmt.Errorf("build mfmd: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "mount", "--store", store, "--shared", url, "--objects", tg.URL("team"),
		"--objects-endpoint", tg.Endpoint, "--agent", "a0", mnt)
	cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID="+tg.Access, "AWS_SECRET_ACCESS_KEY="+tg.Secret)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("mfmd mount: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stop = func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}
	last := filepath.Join(mnt, "agents", fmt.Sprintf("hist-%d", agents-1), episodes.IndexFileName)
	deadline := time.Now().Add(10 * time.Minute)
	for {
		if b, err := os.ReadFile(last); err == nil && bytes.Count(b, []byte("\n")) == rows {
			break
		}
		select {
		case err := <-done:
			return nil, "", fmt.Errorf("mfmd mount exited (%v):\n%s", err, logs.String())
		default:
		}
		if time.Now().After(deadline) {
			stop()
			return nil, "", fmt.Errorf("mfmd mount did not load the history in 10 min:\n%s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				rss = strings.TrimSpace(v)
			}
		}
	}
	return stop, rss, nil
}
