package fs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mfm-project/mfm/episodes"
)

// The mount benchmark (bench/mount.sh; bench/mount.md has the figures):
// the same shell commands over the native store directory and over the
// mount of it, side by side in one run. Skipped unless MFM_FS_BENCH=1.
//
// The store is generated on a private tmpfs: 100,000 episode directories
// (makeLargeStore), the first benchFrames of them with a frame
// (observation/image.png, the committed Luanti run's 256x192 PNGs, about
// 13 KB each), and an index.jsonl of benchRows rows (the paper run's rows,
// repeated). Native runs read tmpfs through the page cache; so does the
// mount (as root its own page cache, filled by READs to the daemon; with
// PerOpen kernel passthrough), so the ratio is the cost of the FUSE layer.

const (
	benchEpisodes = 100_000
	benchFrames   = 20_000
	benchRows     = 1_000_000
	luantiStore   = "../examples/runs/luanti-forest/store"
)

// benchCase is one workload: a shell script run with the store (native
// directory or mount) as its working directory.
type benchCase struct {
	name   string
	script string
	bytes  int64  // bytes read, for MB/s; 0: report times only
	want   string // expected output (checked on both sides)
}

func TestMountBenchmark(t *testing.T) {
	if os.Getenv("MFM_FS_BENCH") == "" {
		t.Skip("set MFM_FS_BENCH=1 (bench/mount.sh)")
	}
	canMount(t)
	reps := 5
	if n, err := strconv.Atoi(os.Getenv("MFM_FS_BENCH_REPS")); err == nil && n > 0 {
		reps = n
	}
	scratch := scratchDir(t)
	store := filepath.Join(scratch, "store")
	t0 := time.Now()
	frameBytes, indexBytes := makeBenchStore(t, store)
	list := filepath.Join(scratch, "frames.list")
	var lb strings.Builder
	for i := 0; i < benchFrames; i++ {
		fmt.Fprintf(&lb, "episodes/ep_%06d/observation/image.png\n", i)
	}
	if err := os.WriteFile(list, []byte(lb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(episodes.EpisodesDir, "ep_000000", "big.bin")
	bigData := bytes.Repeat([]byte("0123456789abcdef"), 100<<20/16) // 100 MiB
	if err := os.WriteFile(filepath.Join(store, big), bigData, 0o644); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("generated %d episodes, %d frames (%.1f MB), index.jsonl %d rows (%.1f MB) on tmpfs in %v\n",
		benchEpisodes, benchFrames, float64(frameBytes)/1e6, benchRows, float64(indexBytes)/1e6, time.Since(t0).Round(time.Millisecond))

	cases := []benchCase{
		{name: fmt.Sprintf("read %d frames (xargs cat)", benchFrames), script: "xargs cat < " + list + " | wc -c", bytes: frameBytes, want: strconv.FormatInt(frameBytes, 10)},
		{name: "read one 100 MiB file (cat)", script: "cat " + big + " | wc -c", bytes: int64(len(bigData)), want: strconv.Itoa(len(bigData))},
		{name: fmt.Sprintf("cat index.jsonl (%d rows)", benchRows), script: "cat index.jsonl | wc -c", bytes: indexBytes, want: strconv.FormatInt(indexBytes, 10)},
		{name: fmt.Sprintf("ls -l episodes/ (%d entries)", benchEpisodes), script: "ls -l episodes | wc -l", want: strconv.Itoa(benchEpisodes + 1)},
		{name: fmt.Sprintf("ls episodes/ (%d entries)", benchEpisodes), script: "ls episodes | wc -l", want: strconv.Itoa(benchEpisodes)},
		{name: fmt.Sprintf("grep -c over index.jsonl (%d rows)", benchRows), script: `grep -c '"kind": "episode"' index.jsonl`, want: ""},
	}
	load := func() string {
		b, _ := os.ReadFile("/proc/loadavg")
		f := strings.Fields(string(b))
		if len(f) < 3 {
			return "?"
		}
		return strings.Join(f[:3], " ")
	}
	// selfCPU is this process's CPU time (user+system): the daemon's, as
	// the tools run in child processes.
	selfCPU := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	runOne := func(dir string, c benchCase) time.Duration {
		t.Helper()
		ctx, cancel := contextTimeout(5 * time.Minute)
		defer cancel()
		start := time.Now()
		out, err := command(ctx, "sh", "-ec", "cd "+dir+" && "+c.script).Output()
		d := time.Since(start)
		if err != nil {
			t.Fatalf("%s in %s: %v", c.script, dir, err)
		}
		got := strings.TrimSpace(string(out))
		if c.want != "" && got != c.want {
			t.Fatalf("%s in %s: %q, want %q", c.script, dir, got, c.want)
		}
		return d
	}
	// grep's answer: whatever the native run says, the mount must match.
	for i := range cases {
		if cases[i].want == "" {
			ctx, cancel := contextTimeout(time.Minute)
			out, err := command(ctx, "sh", "-ec", "cd "+store+" && "+cases[i].script).Output()
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			cases[i].want = strings.TrimSpace(string(out))
		}
	}
	fmt.Printf("GOMAXPROCS %d, %d CPUs, load average at start %s\n", runtime.GOMAXPROCS(0), runtime.NumCPU(), load())

	native := make([][]time.Duration, len(cases))
	cold := make([][]time.Duration, len(cases))
	warm := make([][]time.Duration, len(cases))
	warmCPU := make([][]time.Duration, len(cases))
	for r := 0; r < reps; r++ {
		// A fresh mount per repetition: the first pass is cold for the
		// kernel's FUSE caches (entries, attributes), the second warm.
		tm := mountStoreFor(t, store, Options{}, 30*time.Minute)
		for i, c := range cases {
			cold[i] = append(cold[i], runOne(tm.mnt, c))
		}
		for i, c := range cases {
			native[i] = append(native[i], runOne(store, c))
			cpu0 := selfCPU()
			warm[i] = append(warm[i], runOne(tm.mnt, c))
			warmCPU[i] = append(warmCPU[i], selfCPU()-cpu0)
		}
		tm.unmount()
	}
	med := func(ds []time.Duration) time.Duration {
		s := append([]time.Duration(nil), ds...)
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		return s[len(s)/2]
	}
	fmt.Printf("\nmedian of %d runs each; ratio = mount time / native time (MB/s: mount / native)\n", reps)
	fmt.Printf("| case | native | mount, warm | ratio warm | mount, cold (fresh mount) | ratio cold | daemon CPU, warm |\n| --- | --- | --- | --- | --- | --- | --- |\n")
	for i, c := range cases {
		n, w, k := med(native[i]), med(warm[i]), med(cold[i])
		cell := func(d time.Duration) string {
			s := fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
			if c.bytes > 0 {
				s += fmt.Sprintf(" (%.0f MB/s)", float64(c.bytes)/1e6/d.Seconds())
			}
			return s
		}
		ratio := func(d time.Duration) string {
			if c.bytes > 0 {
				return fmt.Sprintf("%.2fx MB/s", n.Seconds()/d.Seconds())
			}
			return fmt.Sprintf("%.2fx time", d.Seconds()/n.Seconds())
		}
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %.1f ms |\n", c.name, cell(n), cell(w), ratio(w), cell(k), ratio(k), float64(med(warmCPU[i]).Microseconds())/1000)
	}

	// Listings alone on a fresh mount, in the order an agent may run
	// them: a plain ls, then ls -l three times. The plain ls leaves the
	// kernel a copy of the listing without attributes, which the first
	// ls -l drops (it lists through the daemon, READDIRPLUS); the second
	// fills a new copy, the third is served from it (fs/listing.go).
	lsl, ls := cases[3], cases[4]
	seq := make([][]time.Duration, 4)
	for r := 0; r < reps; r++ {
		tm := mountStoreFor(t, store, Options{}, 30*time.Minute)
		seq[0] = append(seq[0], runOne(tm.mnt, ls))
		for i := 1; i < 4; i++ {
			seq[i] = append(seq[i], runOne(tm.mnt, lsl))
		}
		tm.unmount()
	}
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
	fmt.Printf("\na fresh mount, listings alone: ls, then ls -l three times; median of %d:\n", reps)
	fmt.Printf("| ls (cold) | ls -l, 1st | ls -l, 2nd | ls -l, 3rd |\n| --- | --- | --- | --- |\n")
	row := ""
	for i, d := range seq {
		nat := native[3]
		if i == 0 {
			nat = native[4]
		}
		row += fmt.Sprintf("| %s (%.2fx) ", ms(med(d)), med(d).Seconds()/med(nat).Seconds())
	}
	fmt.Printf("%s|\n", row)
	// The frames again without the access log: on the episodes' own
	// mount each open costs the daemon's fanotify watcher CPU time, on
	// the same two cores as the tools.
	fr := cases[0]
	var quietWarm, quietNative []time.Duration
	for r := 0; r < reps; r++ {
		tm := mountStoreFor(t, store, Options{NoAccessLog: true}, 30*time.Minute)
		runOne(tm.mnt, fr)
		quietNative = append(quietNative, runOne(store, fr))
		quietWarm = append(quietWarm, runOne(tm.mnt, fr))
		tm.unmount()
	}
	fmt.Printf("\nwith --no-access-log, median of %d:\n| case | native | mount, warm | ratio warm |\n| --- | --- | --- | --- |\n", reps)
	fmt.Printf("| %s | %s | %s | %.2fx MB/s |\n", fr.name, ms(med(quietNative)), ms(med(quietWarm)), med(quietNative).Seconds()/med(quietWarm).Seconds())
	fmt.Printf("\nload average at end %s\n", load())
}

// makeBenchStore writes the benchmark store (see above) and returns the
// total bytes of the frames and of index.jsonl.
func makeBenchStore(t *testing.T, dir string) (frameBytes, indexBytes int64) {
	t.Helper()
	makeLargeStore(t, dir, benchEpisodes)
	var frames [][]byte
	err := filepath.Walk(filepath.Join(luantiStore, episodes.EpisodesDir), func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() && strings.HasSuffix(p, ".png") {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			frames = append(frames, b)
		}
		return err
	})
	if err != nil || len(frames) == 0 {
		t.Fatalf("frames of %s: %d, %v", luantiStore, len(frames), err)
	}
	for i := 0; i < benchFrames; i++ {
		d := filepath.Join(dir, episodes.EpisodesDir, fmt.Sprintf("ep_%06d", i), "observation")
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		f := frames[i%len(frames)]
		if err := os.WriteFile(filepath.Join(d, "image.png"), f, 0o644); err != nil {
			t.Fatal(err)
		}
		frameBytes += int64(len(f))
	}
	rows, err := os.ReadFile(filepath.Join(fixtureStore, episodes.IndexFileName))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(bytes.TrimSpace(rows), []byte("\n"))
	lines[len(lines)-1] = append(lines[len(lines)-1], '\n')
	f, err := os.Create(filepath.Join(dir, episodes.IndexFileName))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	for i := 0; i < benchRows; i++ {
		buf.Write(lines[i%len(lines)])
		if buf.Len() > 4<<20 || i == benchRows-1 {
			n, err := f.Write(buf.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			indexBytes += int64(n)
			buf.Reset()
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return frameBytes, indexBytes
}
