// Command indexbench measures the cue index against a linear scan of
// index.jsonl and grep, in process and through a mount, on generated
// stores. Run it through bench/index.sh, which builds mfmd and passes
// -mfmd; the figures go to bench/index.md.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/index"
	"github.com/mfm-project/mfm/index/query"
)

var (
	sizes   = flag.String("rows", "100000,1000000", "comma-separated store sizes (rows)")
	dir     = flag.String("dir", "", "work directory (default: a temp dir; use a tmpfs)")
	mfmd    = flag.String("mfmd", "", "mfmd binary for the through-the-mount figures (empty: skip them)")
	iters   = flag.Int("n", 200, "queries per family in process and through the mount")
	scanMax = flag.Int("scan-n", 20, "queries per family for the scan (it is slow)")
	rebuild = flag.Bool("rebuild", true, "delete and rebuild the index to time the build (false: reuse one from an earlier run)")
)

var (
	actions = []string{"go_to", "mine_ahead", "look", "collect_drops", "place_at", "chop_tree", "dig_down", "scan_around", "pillar_up", "look_at"}
	tagSet  = []string{"stuck", "broke", "damage", "milestone", "inventory_changed", "placed", "moved"}
	vocab   = []string{"tree", "trunk", "cave", "river", "shaft", "surface", "log", "stone", "water", "sand", "leaves", "dirt", "gravel", "ore", "torch", "lava", "cliff", "hill", "path", "wall"}
)

// family is one of the five typical queries, drawn with fresh parameters
// each time (a mount shares a query's result for up to 1 s, so repeating
// one string would measure that cache, not the query).
type family struct {
	name string
	gen  func(r *rand.Rand, rows int) string
	grep func(q string) string // an equivalent shell pipeline over index.jsonl, or ""
}

var families = []family{
	{"last:N", func(r *rand.Rand, _ int) string { return fmt.Sprintf("last:%d", 1+r.IntN(50)) },
		func(q string) string { return "tail -" + strings.TrimPrefix(q, "last:") + " index.jsonl" }},
	{"steps:A..A+300", func(r *rand.Rand, rows int) string {
		a := r.IntN(rows * 15)
		return fmt.Sprintf("steps:%d..%d", a, a+300)
	}, nil},
	{"near:X,Z r:R", func(r *rand.Rand, _ int) string {
		return fmt.Sprintf("near:%d,%d r:%d", r.IntN(400)-200, r.IntN(400)-200, 3+r.IntN(6))
	}, nil},
	{"tag:T WORD last:N", func(r *rand.Rand, _ int) string {
		return fmt.Sprintf("tag:%s %s last:%d", tagSet[r.IntN(len(tagSet))], vocab[r.IntN(len(vocab))], 1+r.IntN(20))
	}, func(q string) string {
		f := strings.Fields(q)
		return fmt.Sprintf(`grep -F '"%s"' index.jsonl | grep -iw %s | tail -%s`, strings.TrimPrefix(f[0], "tag:"), f[1], strings.TrimPrefix(f[2], "last:"))
	}},
	{"action:A steps:A..A+5000", func(r *rand.Rand, rows int) string {
		a := r.IntN(rows * 15)
		return fmt.Sprintf("action:%s steps:%d..%d", actions[r.IntN(len(actions))], a, a+5000)
	}, nil},
}

func main() {
	flag.Parse()
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	work := *dir
	if work == "" {
		var err error
		work, err = os.MkdirTemp("", "indexbench")
		check(err)
		defer os.RemoveAll(work)
	}
	fmt.Printf("machine: %d cores, load %s\n", numCPU(), loadavg())
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(s)
		check(err)
		run(filepath.Join(work, "s"+s), n)
	}
}

func run(root string, rows int) {
	fmt.Printf("\n== %d rows\n", rows)
	t0 := time.Now()
	st := generate(root, rows)
	fi, _ := os.Stat(st.Path("index.jsonl"))
	fmt.Printf("generated index.jsonl: %.1f MB in %v\n", float64(fi.Size())/1e6, time.Since(t0).Round(time.Millisecond))

	if *rebuild {
		check(os.RemoveAll(st.Path(".mfm", "cue"))) // measure a full build
	}
	rss0 := rssKB("self")
	x, stats, err := index.Open(context.Background(), st, index.Options{})
	check(err)
	if !stats.Rebuilt {
		fmt.Printf("(index reused: %d rows tailed in %v)\n", stats.Indexed, stats.Took.Round(time.Millisecond))
	}
	fmt.Printf("rebuild: %d rows in %v = %.0f rows/s (incl. force-merge)\n", stats.Indexed, stats.Took.Round(time.Millisecond), float64(stats.Indexed)/stats.Took.Seconds())
	fmt.Printf("index size: %.1f MB (index.jsonl %.1f MB)\n", float64(duBytes(st.Path(".mfm", "cue")))/1e6, float64(fi.Size())/1e6)
	x.Close()
	var reopen []time.Duration
	for i := 0; i < 5; i++ {
		t := time.Now()
		x, stats, err = index.Open(context.Background(), st, index.Options{})
		check(err)
		reopen = append(reopen, time.Since(t))
		if stats.Rebuilt || stats.Indexed != 0 {
			panic(fmt.Sprintf("reopen rebuilt: %+v", stats))
		}
		if i < 4 {
			x.Close()
		}
	}
	fmt.Printf("reopen (up to date, warm): p50 %v\n", pct(reopen, 50))

	ctx := context.Background()
	scan := index.Scan{Store: st}
	fmt.Printf("%-30s %10s %10s %10s %10s %12s %10s %8s\n", "query", "hits(avg)", "index p50", "index p99", "scan p50", "grep p50", "mount p50", "mount p99")
	results := map[string][]string{}
	for fi, f := range families {
		r := rand.New(rand.NewPCG(uint64(fi), 7))
		var qs []string
		for i := 0; i < *iters; i++ {
			qs = append(qs, f.gen(r, rows))
		}
		var idxT, scanT, grepT []time.Duration
		hits := 0
		for i, s := range qs {
			q, err := query.Parse(s)
			check(err)
			t := time.Now()
			h, err := x.Search(ctx, q)
			idxT = append(idxT, time.Since(t))
			check(err)
			hits += len(h)
			if i < *scanMax {
				t = time.Now()
				h2, err := scan.Search(ctx, q)
				scanT = append(scanT, time.Since(t))
				check(err)
				if len(h2) != len(h) {
					panic(fmt.Sprintf("%s: index %d hits, scan %d", s, len(h), len(h2)))
				}
				if f.grep != nil {
					c := exec.Command("sh", "-c", f.grep(s))
					c.Dir = st.Root
					t = time.Now()
					c.Output()
					grepT = append(grepT, time.Since(t))
				}
			}
		}
		g := "—"
		if len(grepT) > 0 {
			g = pct(grepT, 50).Round(10 * time.Microsecond).String()
		}
		results[f.name] = []string{fmt.Sprint(hits / len(qs)), us(pct(idxT, 50)), us(pct(idxT, 99)), ms(pct(scanT, 50)), g}
	}
	rssIdx := rssKB("self")
	x.Close()

	mountP := map[string][2]time.Duration{}
	var daemonRSS int
	if *mfmd != "" {
		mountP, daemonRSS = throughMount(st, rows)
	}
	for _, f := range families {
		r := results[f.name]
		m := mountP[f.name]
		fmt.Printf("%-30s %10s %10s %10s %10s %12s %10s %8s\n", f.name, r[0], r[1], r[2], r[3], r[4], us(m[0]), us(m[1]))
	}
	fmt.Printf("RSS of this process: %d MB before open, %d MB after the queries", rss0/1024, rssIdx/1024)
	if daemonRSS > 0 {
		fmt.Printf("; mfmd mount RSS after the queries: %d MB", daemonRSS/1024)
	}
	fmt.Println()
}

// throughMount mounts st with mfmd and reads q/<query>/count for fresh
// queries of every family; it returns p50/p99 per family and the daemon's RSS.
func throughMount(st *episodes.Store, rows int) (map[string][2]time.Duration, int) {
	mnt := st.Root + ".mnt"
	check(os.MkdirAll(mnt, 0o755))
	cmd := exec.Command(*mfmd, "mount", "--store", st.Root, mnt)
	logs, err := cmd.StderrPipe()
	check(err)
	check(cmd.Start())
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}()
	ready := make(chan struct{})
	go func() { // the daemon logs "cue index ready" once queries use the index
		sc := bufio.NewScanner(logs)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "cue index ready") {
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(10 * time.Minute):
		panic("the mount's cue index was never ready")
	}
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) { // and the mount is up
		if _, err := os.Stat(filepath.Join(mnt, "README.md")); err == nil {
			break
		}
		if time.Since(start) > time.Minute {
			panic("not mounted")
		}
	}
	out := map[string][2]time.Duration{}
	for fi, f := range families {
		r := rand.New(rand.NewPCG(uint64(fi), 99))
		var ts []time.Duration
		seen := map[string]bool{}
		for i := 0; i < *iters; i++ {
			q := f.gen(r, rows)
			if seen[q] {
				continue // a repeat within a second is the mount's shared result, not a query
			}
			seen[q] = true
			p := filepath.Join(mnt, "q", q, "count")
			t := time.Now()
			_, err := os.ReadFile(p)
			ts = append(ts, time.Since(t))
			check(err)
		}
		out[f.name] = [2]time.Duration{pct(ts, 50), pct(ts, 99)}
	}
	return out, rssKB(strconv.Itoa(cmd.Process.Pid))
}

// generate writes a store of rows index rows shaped like the Luanti run's.
func generate(root string, rows int) *episodes.Store {
	if st, err := episodes.Open(root); err == nil {
		return st // reuse a store generated by an earlier run
	}
	st, err := episodes.Init(root)
	check(err)
	f, err := os.Create(st.Path("index.jsonl"))
	check(err)
	w := bufio.NewWriterSize(f, 1<<20)
	r := rand.New(rand.NewPCG(42, uint64(rows)))
	step := 0
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	x, y, z := 0.0, 10.0, 0.0
	for i := 0; i < rows; i++ {
		act := actions[r.IntN(len(actions))]
		n := 1 + r.IntN(30)
		var tags []string
		for _, t := range tagSet {
			if r.IntN(10) == 0 {
				tags = append(tags, strconv.Quote(t))
			}
		}
		words := []string{vocab[r.IntN(len(vocab))], vocab[r.IntN(len(vocab))]}
		x += float64(r.IntN(9) - 4)
		z += float64(r.IntN(9) - 4)
		y = float64(r.IntN(60) - 10)
		if x > 1000 || x < -1000 {
			x = 0
		}
		if z > 1000 || z < -1000 {
			z = 0
		}
		id := episodes.EpisodeID(int64(i))
		fmt.Fprintf(w, `{"id": "%s", "path": "episodes/%s", "image": "episodes/%s/observation/image.png", "kind": "episode", "first_step": %d, "last_step": %d, "action_kind": %q, "summary": "[ACTION] %s -> %d ticks: moved %.1f near the %s by the %s", "tags": [%s], "x": %.1f, "y": %.1f, "z": %.1f, "gui_open": false, "time": %q}`+"\n",
			id, id, id, step, step+n, act, act, n, r.Float64()*5, words[0], words[1], strings.Join(tags, ", "), x+0.5, y, z+0.5, t0.Add(time.Duration(step)*100*time.Millisecond).Format(time.RFC3339Nano))
		step += n
	}
	check(w.Flush())
	check(f.Close())
	return st
}

func pct(ts []time.Duration, p int) time.Duration {
	if len(ts) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ts...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, len(s)*p/100)]
}

func us(d time.Duration) string {
	if d == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d.Microseconds())/1000) }

func rssKB(pid string) int {
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			f := strings.Fields(l)
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	return 0
}

func duBytes(dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			n += info.Size()
		}
		return nil
	})
	return n
}

func numCPU() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return strings.Count(string(b), "processor\t:")
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func check(err error) {
	if err != nil {
		panic(err)
	}
}
