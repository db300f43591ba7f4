package episodes

import (
	"os"
	"path/filepath"
	"testing"
)

func fixtureRow(b *testing.B) []byte {
	data, err := os.ReadFile(filepath.Join(fixtures[1], IndexFileName))
	if err != nil {
		b.Fatal(err)
	}
	r, err := ParseRow(data[:indexByte(data, '\n')])
	if err != nil {
		b.Fatal(err)
	}
	return r.Raw
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return len(b)
}

// BenchmarkAppendRow: index rows appended through an Appender (one
// write(2) each, no fsync).
func BenchmarkAppendRow(b *testing.B) {
	row := fixtureRow(b)
	a, err := OpenAppender(filepath.Join(b.TempDir(), IndexFileName))
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	b.SetBytes(int64(len(row) + 1))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := a.Append(row); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkAppendRowSync: each row appended and fsynced, as WriteEpisode
// does once per episode.
func BenchmarkAppendRowSync(b *testing.B) {
	row := fixtureRow(b)
	a, err := OpenAppender(filepath.Join(b.TempDir(), IndexFileName))
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := a.Append(row); err != nil {
			b.Fatal(err)
		}
		if err := a.Sync(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkBaselineWrite: the same bytes with a plain os.File.Write on an
// O_APPEND file (the floor the Appender adds its newline copy to).
func BenchmarkBaselineWrite(b *testing.B) {
	row := append(fixtureRow(b), '\n')
	f, err := os.OpenFile(filepath.Join(b.TempDir(), IndexFileName), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	b.SetBytes(int64(len(row)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := f.Write(row); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkReadRows: streaming and parsing the diamond fixture's 611 rows.
func BenchmarkReadRows(b *testing.B) {
	path := filepath.Join(fixtures[1], IndexFileName)
	for i := 0; i < b.N; i++ {
		n := 0
		ReadRows(path, 0, func(Row, Line) error { n++; return nil }, nil)
		if n != 611 {
			b.Fatal(n)
		}
	}
	b.ReportMetric(float64(611*b.N)/b.Elapsed().Seconds(), "rows/s")
}
