// Package artifact writes, verifies and imports frozen memory artifacts:
// the declared part of a store (mine/ by default, optionally chosen
// episodes) in a deterministic tar with a manifest of sha256 hashes and
// provenance (source store id, lives, steps, episodes, time, the include
// declaration), so that what crosses from one run to the next is known
// exactly (docs/ARTIFACTS.md). It does not mount or query stores.
package artifact

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/mfm-project/mfm/episodes"
)

// ManifestName is the first entry of every artifact.
const ManifestName = "manifest.json"

// FormatName and FormatVersion identify the manifest format.
const (
	FormatName    = "mfm-artifact"
	FormatVersion = 1
)

// File is one file of an artifact.
type File struct {
	Path   string `json:"path"` // slash-separated, under mine/ or lives/life_N/
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	Exec   bool   `json:"exec,omitempty"` // stored with mode 0755
}

// Source describes the store an artifact was exported from.
type Source struct {
	StoreID  string `json:"store_id"` // mfm-store.json id ("" for a paper store)
	Root     string `json:"root"`     // the store directory at export
	Lives    int    `json:"lives"`    // lives in the store (previous + current)
	Episodes int    `json:"episodes"` // index rows over all lives
	Steps    int64  `json:"steps"`    // sum over lives of the last recorded step
	From     any    `json:"from,omitempty"`
}

// Counts are what an artifact holds.
type Counts struct {
	Files    int   `json:"files"`
	Bytes    int64 `json:"bytes"`
	Mine     int   `json:"mine_files"`
	Episodes int   `json:"episodes"` // included episodes
	Lives    []int `json:"lives"`    // source lives the included episodes come from
}

// Manifest is manifest.json.
type Manifest struct {
	Format   string `json:"format"`
	Version  int    `json:"version"`
	Created  string `json:"created"` // RFC 3339
	Include  string `json:"include"` // the declaration, e.g. "mine,episodes:tag:milestone"
	Source   Source `json:"source"`
	Contains Counts `json:"contains"`
	// Skipped lists what was not exported and why (symlinks, special files).
	Skipped []string `json:"skipped,omitempty"`
	Files   []File   `json:"files"`
}

// Include is a parsed --include declaration.
type Include struct {
	Mine     bool
	Episodes string // the query; "" = no episodes
	HasEps   bool
}

// ParseInclude parses "mine", "episodes:QUERY" or both, comma-separated
// ("mine,episodes:tag:milestone"). Everything after "episodes:" is the
// query (it may contain commas and spaces). "" means "mine".
func ParseInclude(s string) (Include, error) {
	var inc Include
	s = strings.TrimSpace(s)
	if s == "" {
		return Include{Mine: true}, nil
	}
	rest := s
	for rest != "" {
		if q, ok := strings.CutPrefix(rest, "episodes:"); ok {
			inc.HasEps, inc.Episodes = true, strings.TrimSpace(q)
			if inc.Episodes == "" {
				return Include{}, fmt.Errorf("include %q: episodes: needs a query (e.g. episodes:all, episodes:tag:milestone)", s)
			}
			break
		}
		part, tail, _ := strings.Cut(rest, ",")
		switch strings.TrimSpace(part) {
		case "mine":
			inc.Mine = true
		case "episodes":
			return Include{}, fmt.Errorf("include %q: write episodes:QUERY (episodes:all for every episode)", s)
		default:
			return Include{}, fmt.Errorf("include %q: unknown part %q (want mine, episodes:QUERY)", s, part)
		}
		rest = strings.TrimSpace(tail)
	}
	return inc, nil
}

// String is the canonical declaration.
func (inc Include) String() string {
	var parts []string
	if inc.Mine {
		parts = append(parts, "mine")
	}
	if inc.HasEps {
		parts = append(parts, "episodes:"+inc.Episodes)
	}
	return strings.Join(parts, ",")
}

// ExportOptions configure Export.
type ExportOptions struct {
	Include string           // declaration; "" = mine
	Now     func() time.Time // default time.Now
}

type source struct {
	abs  string // file on disk
	file File
}

// Export writes the artifact of store s to w and returns its manifest.
// The tar is deterministic for the same files and time: entries sorted,
// owner 0, mtime the manifest time.
func Export(s *episodes.Store, w io.Writer, opt ExportOptions) (*Manifest, error) {
	inc, err := ParseInclude(opt.Include)
	if err != nil {
		return nil, err
	}
	var q *Query
	if inc.HasEps {
		if q, err = ParseQuery(inc.Episodes); err != nil {
			return nil, err
		}
	}
	now := time.Now
	if opt.Now != nil {
		now = opt.Now
	}
	created := now().UTC().Truncate(time.Second)
	lives, err := s.Lives()
	if err != nil {
		return nil, err
	}
	m, err := newManifest(s, inc, created, lives)
	if err != nil {
		return nil, err
	}
	var files []source
	if q != nil {
		eps, temps, err := selectEpisodes(m, lives, q)
		for _, t := range temps {
			defer os.Remove(t)
		}
		if err != nil {
			return nil, err
		}
		files = append(files, eps...)
	}
	if inc.Mine {
		fs, skipped, err := collect(s.Path(episodes.MineDir), "mine")
		if err != nil {
			return nil, err
		}
		files = append(files, fs...)
		m.Skipped = append(m.Skipped, skipped...)
	}
	if err := m.addFiles(files); err != nil {
		return nil, err
	}
	if err := writeTar(w, m, files, created); err != nil {
		return nil, err
	}
	return m, nil
}

// newManifest starts the manifest of an export of s: format, creation
// time, declaration and the source store (its id, root, provenance and
// size), with no files yet.
func newManifest(s *episodes.Store, inc Include, created time.Time, lives []episodes.Life) (*Manifest, error) {
	m := &Manifest{Format: FormatName, Version: FormatVersion, Created: created.Format(time.RFC3339), Include: inc.String(), Files: []File{}}
	m.Contains.Lives = []int{}
	m.Source = Source{StoreID: s.Format.ID, Root: s.Root, Lives: len(lives)}
	if len(s.Format.From) > 0 {
		var f any
		if json.Unmarshal(s.Format.From, &f) == nil {
			m.Source.From = f
		}
	}
	for _, l := range lives {
		rows, err := l.AllRows()
		if err != nil {
			return nil, err
		}
		m.Source.Episodes += len(rows)
		var last int64
		for _, r := range rows {
			last = max(last, r.LastStep)
		}
		m.Source.Steps += last
	}
	return m, nil
}

// selectEpisodes lists the files of the episodes q selects, per life
// under lives/life_N/: each episode's directory and the selected rows,
// verbatim, as the life's index (written to temporary files, returned so
// the caller removes them once the tar is written). It counts them in m.
func selectEpisodes(m *Manifest, lives []episodes.Life, q *Query) (files []source, temps []string, err error) {
	picks, err := q.Select(lives)
	if err != nil {
		return nil, nil, err
	}
	byLife := map[int][]episodes.Row{}
	for _, p := range picks {
		byLife[p.Life] = append(byLife[p.Life], p.Row)
	}
	for _, l := range lives {
		sel := byLife[l.N]
		if len(sel) == 0 {
			continue
		}
		m.Contains.Lives = append(m.Contains.Lives, l.N)
		m.Contains.Episodes += len(sel)
		prefix := "lives/" + episodes.LifeName(l.N) + "/"
		var idx bytes.Buffer
		for _, r := range sel {
			idx.Write(r.Raw)
			idx.WriteByte('\n')
			dir := filepath.Join(l.Root, filepath.FromSlash(r.Path))
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				m.Skipped = append(m.Skipped, prefix+r.Path+": no episode directory (index row only)")
				continue
			}
			fs, skipped, err := collect(dir, prefix+r.Path)
			if err != nil {
				return nil, temps, err
			}
			files = append(files, fs...)
			m.Skipped = append(m.Skipped, skipped...)
		}
		tmp, err := writeTemp(idx.Bytes())
		if err != nil {
			return nil, temps, err
		}
		temps = append(temps, tmp)
		files = append(files, source{abs: tmp, file: File{Path: prefix + episodes.IndexFileName}})
	}
	return files, temps, nil
}

// addFiles sorts files by artifact path, hashes each and lists it in m.
func (m *Manifest) addFiles(files []source) error {
	sort.Slice(files, func(i, j int) bool { return files[i].file.Path < files[j].file.Path })
	for i := range files {
		f := &files[i]
		sum, size, err := hashFile(f.abs)
		if err != nil {
			return err
		}
		f.file.SHA256, f.file.Size = sum, size
		m.Files = append(m.Files, f.file)
		m.Contains.Files++
		m.Contains.Bytes += size
		if strings.HasPrefix(f.file.Path, "mine/") {
			m.Contains.Mine++
		}
	}
	return nil
}

// writeTar writes the manifest, then files in order, each checked
// against its hash, as a tar with every mtime created.
func writeTar(w io.Writer, m *Manifest, files []source, created time.Time) error {
	mb, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	mb = append(mb, '\n')
	tw := tar.NewWriter(w)
	hdr := func(name string, size int64, mode int64) *tar.Header {
		return &tar.Header{Name: name, Size: size, Mode: mode, ModTime: created, Typeflag: tar.TypeReg, Format: tar.FormatPAX, Uname: "", Gname: ""}
	}
	if err := tw.WriteHeader(hdr(ManifestName, int64(len(mb)), 0o644)); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if _, err := tw.Write(mb); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	for _, f := range files {
		mode := int64(0o644)
		if f.file.Exec {
			mode = 0o755
		}
		if err := tw.WriteHeader(hdr(f.file.Path, f.file.Size, mode)); err != nil {
			return fmt.Errorf("export %s: %w", f.file.Path, err)
		}
		if err := copyChecked(tw, f.abs, f.file); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}

// collect lists the regular files under dir as artifact paths under
// prefix; symlinks and special files are skipped and reported.
func collect(dir, prefix string) ([]source, []string, error) {
	var out []source
	var skipped []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == dir {
				return filepath.SkipDir
			}
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		name := path.Join(prefix, filepath.ToSlash(rel))
		switch {
		case d.IsDir():
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			skipped = append(skipped, name+": symlink (not exported)")
			return nil
		case !d.Type().IsRegular():
			skipped = append(skipped, name+": not a regular file (not exported)")
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, source{abs: p, file: File{Path: name, Exec: fi.Mode()&0o111 != 0}})
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("export: read %s: %w", dir, err)
	}
	return out, skipped, nil
}

func hashFile(p string) (string, int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", 0, fmt.Errorf("export: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, fmt.Errorf("export: read %s: %w", p, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// copyChecked copies a file into the tar and fails if it changed since it
// was hashed (a write during export).
func copyChecked(w io.Writer, p string, f File) error {
	in, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	defer in.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, h), io.LimitReader(in, f.Size))
	if err != nil {
		return fmt.Errorf("export %s: %w", f.Path, err)
	}
	if n != f.Size || hex.EncodeToString(h.Sum(nil)) != f.SHA256 {
		return fmt.Errorf("export %s: the file changed during export; export again when it is quiet", f.Path)
	}
	return nil
}

func writeTemp(b []byte) (string, error) {
	f, err := os.CreateTemp("", "mfm-artifact-index-*")
	if err != nil {
		return "", fmt.Errorf("export: %w", err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("export: %w", err)
	}
	return f.Name(), nil
}

// ExportFile exports to path atomically (temporary file, rename).
func ExportFile(s *episodes.Store, out string, opt ExportOptions) (*Manifest, error) {
	dir := filepath.Dir(out)
	f, err := os.CreateTemp(dir, "."+filepath.Base(out)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	defer os.Remove(f.Name())
	m, err := Export(s, f, opt)
	if err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, fmt.Errorf("export: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	if err := os.Chmod(f.Name(), 0o444); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	if err := os.Rename(f.Name(), out); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	return m, nil
}
