package filestamp

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func stampOf(t *testing.T, p string) Stamp {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return Of(fi)
}

func write(t *testing.T, p, data string, mtime time.Time) {
	t.Helper()
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

// TestStamps: the versions a cache must tell apart get different stamps
// even with the same size and modification time; an unchanged file keeps
// its stamp.
func TestStamps(t *testing.T) {
	dir := t.TempDir()
	tick := time.Unix(1_700_000_000, 0)
	for _, c := range []struct {
		name string
		// change returns the path whose stamp is compared with the first.
		change func(t *testing.T, first string) string
		same   bool
	}{
		{"unchanged", func(t *testing.T, first string) string { return first }, true},
		{"another file, same size and time", func(t *testing.T, first string) string {
			p := first + ".other"
			write(t, p, "bbbb", tick)
			return p
		}, false},
		{"replaced by rename, same size and time", func(t *testing.T, first string) string {
			// keep the old inode alive so its number is not reused
			old, err := os.Open(first)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { old.Close() })
			tmp := first + ".tmp"
			write(t, tmp, "cccc", tick)
			if err := os.Rename(tmp, first); err != nil {
				t.Fatal(err)
			}
			return first
		}, false},
		{"rewritten in place, same size and time", func(t *testing.T, first string) string {
			waitForTick(t, first)
			write(t, first, "dddd", tick)
			return first
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			first := filepath.Join(dir, filepath.Base(t.Name()))
			write(t, first, "aaaa", tick)
			a := stampOf(t, first)
			b := stampOf(t, c.change(t, first))
			if a.Size != b.Size || a.Mtime != b.Mtime {
				t.Fatalf("the case should keep size and mtime: %v, %v", a, b)
			}
			if (a == b) != c.same || (a.String() == b.String()) != c.same {
				t.Errorf("%v and %v: same=%v, want %v", a, b, a == b, c.same)
			}
		})
	}
}

// waitForTick waits until a file written now gets a later change time
// than p has: the kernel's file clock has ticked.
func waitForTick(t *testing.T, p string) {
	t.Helper()
	was := stampOf(t, p).Ctime
	probe := p + ".probe"
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		if err := os.WriteFile(probe, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if stampOf(t, probe).Ctime > was {
			return
		}
	}
	t.Fatal("the file clock did not tick in 5 s")
}

// TestPath: Path is Of of the file's stat, the zero Stamp for a missing
// file, and allocates only the path's C string.
func TestPath(t *testing.T) {
	p := filepath.Join(t.TempDir(), "index.jsonl")
	write(t, p, "{}\n", time.Unix(1_700_000_000, 5))
	if got, want := Path(p), stampOf(t, p); got != want || got.Ino == 0 || got.Ctime == 0 {
		t.Errorf("Path = %v, want %v (with inode and ctime)", got, want)
	}
	if got := Path(p + ".missing"); got != (Stamp{}) {
		t.Errorf("Path of a missing file = %v, want the zero Stamp", got)
	}
	if n := testing.AllocsPerRun(100, func() { Path(p) }); n > 1 {
		t.Errorf("Path allocates %v times a call", n)
	}
}
