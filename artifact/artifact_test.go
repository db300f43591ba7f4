package artifact

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mfm-project/mfm/episodes"
)

// copyTree copies a fixture store so tests never touch testdata.
func copyTree(t testing.TB, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "store")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

var fixed = func() time.Time { return time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC) }

func TestRoundTrip(t *testing.T) {
	src := copyTree(t, "../testdata/paper-run/store")
	if err := os.MkdirAll(filepath.Join(src, "mine", "procedures"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "mine", "procedures", "dig.sh"), []byte("#!/bin/sh\necho '{\"actions\": []}'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := episodes.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "a.tar")
	m, err := ExportFile(s, out, ExportOptions{Include: "mine,episodes:tag:milestone", Now: fixed})
	if err != nil {
		t.Fatal(err)
	}
	// mine: notes.md, 4 reflexes, dig.sh; milestone episodes of the run:
	// water_1, log_1, water_2 -> 3 rows, each with 3 files, plus the index.
	if m.Contains.Mine != 6 || m.Contains.Episodes != 3 || m.Contains.Files != 6+3*3+1 || m.Source.Episodes != 78 || m.Source.Lives != 1 || m.Source.Steps != 3985 {
		t.Fatalf("manifest counts %+v source %+v", m.Contains, m.Source)
	}
	// deterministic: the same store and time give the same bytes
	out2 := filepath.Join(t.TempDir(), "b.tar")
	if _, err := ExportFile(s, out2, ExportOptions{Include: "mine,episodes:tag:milestone", Now: fixed}); err != nil {
		t.Fatal(err)
	}
	if a, b := sha(t, out), sha(t, out2); a != b {
		t.Errorf("two exports differ: %s %s", a, b)
	}
	rep, err := Verify(out, Limits{})
	if err != nil || rep.Err() != nil || rep.Checked != m.Contains.Files {
		t.Fatalf("verify: %v %v checked %d", err, rep.Err(), rep.Checked)
	}
	dst := filepath.Join(t.TempDir(), "seeded")
	ns, prov, err := Seed(out, dst)
	if err != nil {
		t.Fatal(err)
	}
	if prov.ManifestSHA256 != rep.ManifestSHA256 || prov.Include != "mine,episodes:tag:milestone" || prov.Lives["1"] != 1 {
		t.Errorf("provenance %+v", prov)
	}
	re, err := episodes.Open(dst)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := ProvenanceOf(re); err != nil || p == nil || p.Episodes != 3 {
		t.Errorf("mfm-store.json from: %+v %v", p, err)
	}
	// ReadProvenance reads mfm-store.json alone, as the mount's README does.
	rp, err := ReadProvenance(dst)
	if err != nil || rp == nil || rp.ManifestSHA256 != rep.ManifestSHA256 || rp.MineFiles != 6 || rp.SourceEpisodes != 78 || rp.SourceSteps != 3985 || rp.Bytes != m.Contains.Bytes {
		t.Fatalf("ReadProvenance: %+v %v", rp, err)
	}
	md := rp.Markdown()
	for _, want := range []string{"## Provenance", "`a.tar` (manifest sha256 `" + rep.ManifestSHA256 + "`)", "exported 2026-", "1 lives, 78 episodes, 3985 steps",
		"declared include: `mine,episodes:tag:milestone`", "16 files", "6 in `mine/`, 3 episodes", "source life 1 → `previous/life_1/`"} {
		if !strings.Contains(md, want) {
			t.Errorf("README section lacks %q:\n%s", want, md)
		}
	}
	if p, err := ReadProvenance(src); err != nil || p != nil {
		t.Errorf("unseeded store: provenance %+v %v, want nil", p, err)
	}
	if p, err := ReadProvenance(t.TempDir()); err != nil || p != nil {
		t.Errorf("paper store without mfm-store.json: provenance %+v %v", p, err)
	}
	if !strings.Contains((*Provenance)(nil).Markdown(), "not seeded from an artifact") {
		t.Error("nil provenance markdown")
	}
	for _, f := range m.Files {
		dstPath, _ := destination(f.Path, map[string]int{"1": 1})
		got, err := os.ReadFile(filepath.Join(ns.Root, dstPath))
		if err != nil {
			t.Fatal(err)
		}
		if h := sha256.Sum256(got); hex.EncodeToString(h[:]) != f.SHA256 {
			t.Errorf("%s differs after seeding", f.Path)
		}
	}
	if fi, err := os.Stat(filepath.Join(dst, "mine", "procedures", "dig.sh")); err != nil || fi.Mode()&0o111 == 0 {
		t.Errorf("dig.sh lost its exec bit: %v", err)
	}
	lives, _ := re.Lives()
	if len(lives) != 2 || !lives[1].Current {
		t.Fatalf("lives %+v", lives)
	}
	rows, _ := lives[0].AllRows()
	if len(rows) != 3 || rows[2].ID != "ep_000077" {
		t.Errorf("previous life rows %d", len(rows))
	}
	cur, _ := lives[1].AllRows()
	if len(cur) != 0 {
		t.Errorf("the new life has %d rows, want 0", len(cur))
	}
	// Seeding over a store is refused.
	if _, _, err := Seed(out, dst); err == nil || !strings.Contains(err.Error(), "already a store") {
		t.Errorf("seed over a store: %v", err)
	}

	// Tamper: change one byte of notes.md inside the tar.
	b, _ := os.ReadFile(out)
	i := bytes.Index(b, []byte("# Run notes"))
	b[i+2] = 'r'
	bad := filepath.Join(t.TempDir(), "tampered.tar")
	os.WriteFile(bad, b, 0o644)
	rep, err = Verify(bad, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if e := rep.Err(); !errors.Is(e, ErrTampered) || !strings.Contains(e.Error(), "mine/notes.md: sha256") || len(rep.Problems) != 1 {
		t.Fatalf("tampered verify: %v", e)
	}
	if _, _, err := Seed(bad, filepath.Join(t.TempDir(), "x")); !errors.Is(err, ErrTampered) {
		t.Errorf("seed of a tampered artifact: %v", err)
	}
}

func sha(t testing.TB, p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// evilTar builds an artifact whose manifest lists entries as given.
func evilTar(t testing.TB, entries []*tar.Header, bodies []string, files []File) string {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	m := Manifest{Format: FormatName, Version: 1, Files: files}
	mb, _ := json.Marshal(m)
	tw.WriteHeader(&tar.Header{Name: ManifestName, Size: int64(len(mb)), Mode: 0o644, Typeflag: tar.TypeReg})
	tw.Write(mb)
	for i, h := range entries {
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(bodies[i]))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(bodies[i]))
	}
	tw.Close()
	p := filepath.Join(t.TempDir(), "evil.tar")
	os.WriteFile(p, buf.Bytes(), 0o644)
	return p
}

func fileOf(p, body string) File {
	h := sha256.Sum256([]byte(body))
	return File{Path: p, Size: int64(len(body)), SHA256: hex.EncodeToString(h[:])}
}

func TestUnsafeArchives(t *testing.T) {
	reg := func(name string) *tar.Header { return &tar.Header{Name: name, Mode: 0o644, Typeflag: tar.TypeReg} }
	cases := []struct {
		name    string
		entries []*tar.Header
		bodies  []string
		files   []File
		want    string
	}{
		{"dotdot", []*tar.Header{reg("mine/../../etc/x")}, []string{"x"}, nil, "not a clean relative path"},
		{"absolute", []*tar.Header{reg("/etc/passwd")}, []string{"x"}, nil, "not a clean relative path"},
		{"outside", []*tar.Header{reg("episodes/x")}, []string{"x"}, nil, "outside mine/ and lives/"},
		{"symlink", []*tar.Header{{Name: "mine/l", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}}, []string{""}, nil, "is a symlink"},
		{"hardlink", []*tar.Header{{Name: "mine/l", Typeflag: tar.TypeLink, Linkname: "mine/a"}}, []string{""}, nil, "is a hard link"},
		{"device", []*tar.Header{{Name: "mine/d", Typeflag: tar.TypeChar, Devmajor: 1, Devminor: 3}}, []string{""}, nil, "is a device"},
		{"duplicate", []*tar.Header{reg("mine/a"), reg("mine/a")}, []string{"x", "x"}, []File{fileOf("mine/a", "x")}, "appears twice"},
		{"manifest escape", nil, nil, []File{fileOf("mine/../x", "x")}, "not a clean relative path"},
		{"oversized", []*tar.Header{reg("mine/big")}, []string{strings.Repeat("x", 2000)}, []File{fileOf("mine/big", strings.Repeat("x", 2000))}, "over the 1000-byte cap"},
		{"file and directory", []*tar.Header{reg("mine/a"), reg("mine/a/b")}, []string{"x", "y"}, []File{fileOf("mine/a", "x"), fileOf("mine/a/b", "y")}, "mine/a is listed as a file and is the directory of mine/a/b"},
		{"bad life", []*tar.Header{reg("lives/x/a")}, []string{"x"}, []File{fileOf("lives/x/a", "x")}, "want lives/life_N"},
		{"file named mine", []*tar.Header{reg("mine")}, []string{"x"}, []File{fileOf("mine", "x")}, "not mine itself"},
		{"entry named mine", []*tar.Header{reg("mine")}, []string{"x"}, nil, "not mine itself"},
		{"life without a file", []*tar.Header{reg("lives/life_1")}, []string{"x"}, []File{fileOf("lives/life_1", "x")}, "want lives/life_N"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := evilTar(t, c.entries, c.bodies, c.files)
			_, err := Verify(p, Limits{FileBytes: 1000})
			if !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("verify: %v, want ErrUnsafe saying %q", err, c.want)
			}
			dst := filepath.Join(t.TempDir(), "s")
			if _, _, err := SeedWith(p, dst, SeedOptions{Limits: Limits{FileBytes: 1000}}); err == nil {
				t.Fatal("seed accepted an unsafe archive")
			}
			if _, err := os.Stat(dst); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a refused seed left %s behind", dst)
			}
		})
	}
	// A file not in the manifest, and a listed one missing: tampering.
	p := evilTar(t, []*tar.Header{reg("mine/extra")}, []string{"x"}, []File{fileOf("mine/gone", "y")})
	rep, err := Verify(p, Limits{})
	if err != nil || !errors.Is(rep.Err(), ErrTampered) || len(rep.Problems) != 2 {
		t.Fatalf("extra/missing: %v %v", err, rep.Problems)
	}
	// Not a tar, not an artifact.
	junk := filepath.Join(t.TempDir(), "junk")
	os.WriteFile(junk, []byte("hello"), 0o644)
	if _, err := Verify(junk, Limits{}); err == nil || !strings.Contains(err.Error(), "not a tar") {
		t.Errorf("junk: %v", err)
	}
}

func TestParseInclude(t *testing.T) {
	cases := []struct{ in, want, err string }{
		{"", "mine", ""},
		{"mine", "mine", ""},
		{"mine,episodes:tag:milestone", "mine,episodes:tag:milestone", ""},
		{"episodes:all", "episodes:all", ""},
		{"mine, episodes:tag:stuck steps:0..100", "mine,episodes:tag:stuck steps:0..100", ""},
		{"episodes", "", "episodes:QUERY"},
		{"episodes:", "", "needs a query"},
		{"notes", "", "unknown part"},
	}
	for _, c := range cases {
		inc, err := ParseInclude(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || inc.String() != c.want {
			t.Errorf("%q: %q %v, want %q", c.in, inc.String(), err, c.want)
		}
	}
}

func TestQuery(t *testing.T) {
	s, err := episodes.Open("../testdata/paper-run/store")
	if err != nil {
		t.Fatal(err)
	}
	lives, _ := s.Lives()
	cases := []struct {
		q     string
		n     int
		first string
	}{
		{"all", 78, "ep_000000"},
		{"tag:milestone", 3, "ep_000043"},
		{"action:fetch_water", 0, ""},
		{"steps:3500..3600 tag:milestone", 1, ""},
		{"ep_000010 ep_000011", 2, "ep_000010"},
		{"all last:2", 2, "ep_000076"},
		{"kind:initial", 1, "ep_000000"},
		{"life:2", 0, ""},
		{"WATER_2", 1, "ep_000077"},
		{"action:fetch_water action:go_to", -1, ""}, // any of them: counted below
	}
	for _, c := range cases {
		q, err := ParseQuery(c.q)
		if err != nil {
			t.Fatalf("%q: %v", c.q, err)
		}
		picks, err := q.Select(lives)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(c.q, "action:") {
			// count the rows of those actions by hand
			rows, _ := lives[0].AllRows()
			c.n = 0
			for _, r := range rows {
				if strings.Contains(c.q, "action:"+r.Action()+" ") || strings.HasSuffix(c.q, "action:"+r.Action()) {
					c.n++
				}
			}
			if c.n == 0 {
				t.Fatalf("%q: the fixture has no such rows", c.q)
			}
		}
		if len(picks) != c.n || (c.first != "" && picks[0].Row.ID != c.first) {
			got := ""
			if len(picks) > 0 {
				got = picks[0].Row.ID
			}
			t.Errorf("%q: %d rows first %s, want %d first %s", c.q, len(picks), got, c.n, c.first)
		}
	}
	for _, bad := range []string{"", "steps:1", "life:0", "last:x", "foo:bar", "ep_12"} {
		if _, err := ParseQuery(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{"all", "tag:milestone steps:0..10 last:3", "life:1..2 ep_000001 water", "steps:a..b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := ParseQuery(s)
		if err != nil {
			return
		}
		r, err := episodes.ParseRow([]byte(`{"id": "ep_000001", "first_step": 0, "last_step": 5, "tags": ["a"]}`))
		if err != nil {
			t.Fatal(err)
		}
		q.Match(&r, 1)
	})
}

func FuzzParseInclude(f *testing.F) {
	for _, s := range []string{"mine", "mine,episodes:all", "episodes:tag:x,y", ",,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		inc, err := ParseInclude(s)
		if err != nil {
			return
		}
		again, err := ParseInclude(inc.String())
		if err != nil || again.String() != inc.String() {
			t.Fatalf("%q -> %q does not parse back (%v)", s, inc.String(), err)
		}
	})
}

// FuzzReadArtifact: any bytes are read without panic, and nothing unsafe
// is ever passed on for extraction.
func FuzzReadArtifact(f *testing.F) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	body := "hello"
	mb, _ := json.Marshal(Manifest{Format: FormatName, Version: 1, Files: []File{fileOf("mine/a", body)}})
	tw.WriteHeader(&tar.Header{Name: ManifestName, Size: int64(len(mb)), Mode: 0o644, Typeflag: tar.TypeReg})
	tw.Write(mb)
	tw.WriteHeader(&tar.Header{Name: "mine/a", Size: 5, Mode: 0o644, Typeflag: tar.TypeReg})
	tw.Write([]byte(body))
	tw.Close()
	f.Add(buf.Bytes())
	f.Add([]byte("not a tar"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rep := &Report{}
		_ = walk(bytes.NewReader(data), Limits{FileBytes: 1 << 16, TotalBytes: 1 << 20, ManifestBytes: 1 << 16, Files: 1000}, rep, func(fl File, r io.Reader) error {
			if err := checkName(fl.Path); err != nil {
				t.Fatalf("unsafe entry passed on: %v", err)
			}
			checkDestination(t, fl.Path)
			_, err := io.Copy(io.Discard, r)
			if err != nil && !errors.Is(err, ErrTampered) {
				return err
			}
			return nil
		})
	})
}

// checkDestination asserts that a name checkName accepts maps to a clean
// path inside mine/ or previous/ of the new store, or is refused, without
// a panic.
func checkDestination(t *testing.T, name string) {
	t.Helper()
	dst, err := destination(name, map[string]int{"1": 1, "3": 2})
	if err != nil {
		if !errors.Is(err, ErrUnsafe) {
			t.Fatalf("destination(%q): %v, want ErrUnsafe", name, err)
		}
		return
	}
	if !fs.ValidPath(dst) || path.Clean(dst) != dst || (!strings.HasPrefix(dst, "mine/") && !strings.HasPrefix(dst, "previous/life_")) {
		t.Fatalf("destination(%q) = %q: not a file inside mine/ or previous/", name, dst)
	}
}

// FuzzImportPath: every name an artifact may list is either refused by
// checkName or maps to a file inside mine/ or previous/ of the new store
// (never mine itself, never a panic).
func FuzzImportPath(f *testing.F) {
	for _, s := range []string{"mine", "mine/", "mine/a", "lives", "lives/life_1", "lives/life_1/", "lives/life_1/index.jsonl",
		"lives/life_3/episodes/ep_000001/action.json", "lives/life_2/x", "lives/life_x/a", "mine/../x", "/mine/a", "mine//a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if checkName(name) != nil {
			return
		}
		checkDestination(t, name)
	})
}
