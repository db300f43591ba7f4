package artifact

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
)

// Limits bound what reading an artifact may cost. The zero value takes
// the defaults.
type Limits struct {
	ManifestBytes int64 // default 64 MiB
	FileBytes     int64 // one file; default 1 GiB
	TotalBytes    int64 // all files; default 16 GiB
	Files         int   // default 1,000,000
}

func (l Limits) manifest() int64 { return orI64(l.ManifestBytes, 64<<20) }
func (l Limits) file() int64     { return orI64(l.FileBytes, 1<<30) }
func (l Limits) total() int64    { return orI64(l.TotalBytes, 16<<30) }
func (l Limits) files() int {
	if l.Files > 0 {
		return l.Files
	}
	return 1_000_000
}
func orI64(v, d int64) int64 {
	if v > 0 {
		return v
	}
	return d
}

// ErrTampered is wrapped by verification failures: a file whose hash or
// size differs from the manifest, a file missing or not listed.
var ErrTampered = errors.New("artifact does not match its manifest")

// ErrUnsafe is wrapped when an archive entry is refused: a path leaving
// the tree, a link, a device, a duplicate, a file over the size caps.
var ErrUnsafe = errors.New("unsafe archive entry")

// Problem is one mismatch found by Verify.
type Problem struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Report is the result of Verify.
type Report struct {
	Manifest *Manifest `json:"manifest"`
	Checked  int       `json:"checked"`
	Problems []Problem `json:"problems"`
	// ManifestSHA256 names the artifact: the hash of its manifest.json.
	ManifestSHA256 string `json:"manifest_sha256"`
}

// Err returns nil for a clean report, else an error wrapping ErrTampered
// that names the files.
func (r *Report) Err() error {
	if len(r.Problems) == 0 {
		return nil
	}
	var b strings.Builder
	for i, p := range r.Problems {
		if i > 0 {
			b.WriteString("; ")
		}
		if i == 10 {
			fmt.Fprintf(&b, "and %d more", len(r.Problems)-10)
			break
		}
		b.WriteString(p.Path + ": " + p.Reason)
	}
	return fmt.Errorf("%w: %s", ErrTampered, b.String())
}

// entryFunc receives each checked file entry of an archive with a reader
// of its content (hash-checked as it is read: the reader returns an error
// wrapping ErrTampered at EOF when the content differs).
type entryFunc func(f File, r io.Reader) error

// walk reads an artifact: the manifest first, then every entry, refusing
// unsafe ones (an error wrapping ErrUnsafe) and reporting mismatches into
// rep. fn may be nil (verify only).
func walk(r io.Reader, lim Limits, rep *Report, fn entryFunc) error {
	tr := tar.NewReader(r)
	h, err := tr.Next()
	if err != nil {
		return fmt.Errorf("read artifact: %w (not a tar archive?)", err)
	}
	if h.Name != ManifestName || h.Typeflag != tar.TypeReg {
		return fmt.Errorf("read artifact: first entry is %q, want %s (not an MFM artifact)", h.Name, ManifestName)
	}
	if h.Size > lim.manifest() {
		return fmt.Errorf("read artifact: %w: manifest is %d bytes, over the %d-byte cap", ErrUnsafe, h.Size, lim.manifest())
	}
	mh := sha256.New()
	mb, err := io.ReadAll(io.TeeReader(io.LimitReader(tr, lim.manifest()), mh))
	if err != nil {
		return fmt.Errorf("read artifact manifest: %w", err)
	}
	rep.ManifestSHA256 = hex.EncodeToString(mh.Sum(nil))
	var m Manifest
	if err := json.Unmarshal(mb, &m); err != nil {
		return fmt.Errorf("read artifact manifest: %w", err)
	}
	if m.Format != FormatName || m.Version < 1 || m.Version > FormatVersion {
		return fmt.Errorf("read artifact manifest: format %q version %d, want %s version 1..%d", m.Format, m.Version, FormatName, FormatVersion)
	}
	rep.Manifest = &m
	want := make(map[string]File, len(m.Files))
	var total int64
	for _, f := range m.Files {
		if err := checkName(f.Path); err != nil {
			return fmt.Errorf("read artifact manifest: %w", err)
		}
		if _, dup := want[f.Path]; dup {
			return fmt.Errorf("read artifact manifest: %w: %s listed twice", ErrUnsafe, f.Path)
		}
		if f.Size < 0 || f.Size > lim.file() {
			return fmt.Errorf("read artifact manifest: %w: %s is %d bytes, over the %d-byte cap", ErrUnsafe, f.Path, f.Size, lim.file())
		}
		total += f.Size
		want[f.Path] = f
	}
	for _, f := range m.Files {
		for d := path.Dir(f.Path); d != "."; d = path.Dir(d) {
			if _, clash := want[d]; clash {
				return fmt.Errorf("read artifact manifest: %w: %s is listed as a file and is the directory of %s", ErrUnsafe, d, f.Path)
			}
		}
	}
	if len(m.Files) > lim.files() {
		return fmt.Errorf("read artifact: %w: %d files, over the cap of %d", ErrUnsafe, len(m.Files), lim.files())
	}
	if total > lim.total() {
		return fmt.Errorf("read artifact: %w: %d bytes in all, over the %d-byte cap", ErrUnsafe, total, lim.total())
	}
	seen := map[string]bool{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read artifact: %w", err)
		}
		if h.Typeflag != tar.TypeReg {
			return fmt.Errorf("read artifact: %w: %s is a %s, only regular files are allowed", ErrUnsafe, h.Name, typeName(h.Typeflag))
		}
		if err := checkName(h.Name); err != nil {
			return fmt.Errorf("read artifact: %w", err)
		}
		if seen[h.Name] {
			return fmt.Errorf("read artifact: %w: %s appears twice", ErrUnsafe, h.Name)
		}
		seen[h.Name] = true
		f, listed := want[h.Name]
		if !listed {
			rep.Problems = append(rep.Problems, Problem{h.Name, "not in the manifest"})
			continue
		}
		if h.Size != f.Size {
			rep.Problems = append(rep.Problems, Problem{h.Name, fmt.Sprintf("size %d, manifest says %d", h.Size, f.Size)})
			continue
		}
		hr := &hashReader{r: io.LimitReader(tr, f.Size), h: sha256.New(), f: f}
		if fn != nil {
			if err := fn(f, hr); err != nil {
				return err
			}
		}
		if _, err := io.Copy(io.Discard, hr); err != nil && !errors.Is(err, ErrTampered) {
			return fmt.Errorf("read artifact %s: %w", f.Path, err)
		}
		rep.Checked++
		if !hr.ok() {
			rep.Problems = append(rep.Problems, Problem{h.Name, "sha256 " + hr.sum() + ", manifest says " + f.SHA256})
		}
	}
	for _, f := range m.Files {
		if !seen[f.Path] {
			rep.Problems = append(rep.Problems, Problem{f.Path, "listed in the manifest but missing"})
		}
	}
	return nil
}

// hashReader hashes what is read; at EOF it returns ErrTampered (wrapped)
// if the content differs from the manifest.
type hashReader struct {
	r io.Reader
	h interface {
		io.Writer
		Sum([]byte) []byte
	}
	f    File
	done bool
}

func (h *hashReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	h.h.Write(p[:n])
	if errors.Is(err, io.EOF) {
		h.done = true
		if !h.ok() {
			return n, fmt.Errorf("%w: %s: sha256 %s, manifest says %s", ErrTampered, h.f.Path, h.sum(), h.f.SHA256)
		}
	}
	return n, err
}

func (h *hashReader) sum() string { return hex.EncodeToString(h.h.Sum(nil)) }
func (h *hashReader) ok() bool    { return h.sum() == h.f.SHA256 }

// checkName refuses entry names that could leave the tree or that an
// artifact never holds.
func checkName(name string) error {
	if name == "" || strings.ContainsRune(name, 0) || strings.Contains(name, "\\") {
		return fmt.Errorf("%w: entry name %q", ErrUnsafe, name)
	}
	if !fs.ValidPath(name) || path.Clean(name) != name || strings.HasPrefix(name, "/") {
		return fmt.Errorf("%w: entry %q is not a clean relative path (absolute, .. or empty element)", ErrUnsafe, name)
	}
	top, rest, _ := strings.Cut(name, "/")
	if top != "mine" && top != "lives" {
		return fmt.Errorf("%w: entry %q is outside mine/ and lives/", ErrUnsafe, name)
	}
	if top == "mine" && rest == "" {
		return fmt.Errorf("%w: entry %q: want mine/… (a file inside mine/, not mine itself)", ErrUnsafe, name)
	}
	if top == "lives" {
		parts := strings.Split(name, "/")
		if len(parts) < 3 || !strings.HasPrefix(parts[1], "life_") {
			return fmt.Errorf("%w: entry %q: want lives/life_N/…", ErrUnsafe, name)
		}
	}
	return nil
}

func typeName(t byte) string {
	switch t {
	case tar.TypeSymlink:
		return "symlink"
	case tar.TypeLink:
		return "hard link"
	case tar.TypeDir:
		return "directory entry"
	case tar.TypeChar, tar.TypeBlock:
		return "device"
	case tar.TypeFifo:
		return "fifo"
	}
	return fmt.Sprintf("entry of type %q", t)
}

// Verify checks an artifact file: every file's size and sha256 against the
// manifest, nothing missing, nothing extra. A clean artifact gives a
// report whose Err() is nil; unreadable or unsafe archives are errors.
func Verify(archive string, lim Limits) (*Report, error) {
	f, err := os.Open(archive)
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	defer f.Close()
	rep := &Report{Problems: []Problem{}}
	if err := walk(f, lim, rep, nil); err != nil {
		return rep, fmt.Errorf("verify %s: %w", archive, err)
	}
	return rep, nil
}

// ReadManifest returns an artifact's manifest without checking files.
func ReadManifest(archive string) (*Manifest, error) {
	f, err := os.Open(archive)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rep := &Report{}
	errStop := errors.New("stop")
	err = walk(f, Limits{}, rep, func(File, io.Reader) error { return errStop })
	if rep.Manifest != nil {
		return rep.Manifest, nil
	}
	return nil, err
}
