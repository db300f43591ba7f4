package index

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	bq "github.com/blevesearch/bleve/v2/search/query"
	"github.com/fsnotify/fsnotify"
	"github.com/schollz/progressbar/v3"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/index/query"
)

// SchemaVersion names the index's document mapping and id scheme. An
// index written with another version is moved aside and rebuilt.
const SchemaVersion = "mfm-cue-6"

// cellShifts are the x/z cell sizes near: is prefiltered by: 8, 64 and
// 512 blocks (a row indexes its cell at each).
var cellShifts = []uint{3, 6, 9}

// maxNearCells caps the cells a near: term is prefiltered by: it uses the
// finest size needing no more; a larger radius is answered by the exact
// distance test alone.
const maxNearCells = 64

// batchRows is how many rows one bleve batch holds: the fastest size
// measured, far below the sizes whose memory peaks (bench/index.md).
const batchRows = 1000

// ErrBusy is returned (wrapped) by Open when another process holds the
// store's cue index.
var ErrBusy = errors.New("cue index is in use by another process")

// Options configure Open.
type Options struct {
	// Progress, when set, receives a progress bar while rows are indexed
	// in bulk (pass os.Stderr when it is a terminal).
	Progress io.Writer
	// Logger receives warnings (malformed rows, rebuilds); nil is slog.Default.
	Logger *slog.Logger
}

// Index is the bleve (scorch) cue index of a store, derived and
// disposable: it lives in store/.mfm/cue/ and holds, per row, only the
// terms queries prefilter by; rows are read back from index.jsonl by
// their offset and checked with query.Match, so its answers equal Scan's.
// Each life has a watermark (offset and sha256 of the last indexed line);
// Sync indexes what lies past it. One process at a time owns an index
// (an flock on .mfm/cue.lock).
type Index struct {
	store *episodes.Store
	path  string // the bleve index directory
	log   *slog.Logger
	lock  *episodes.FileLock

	mu    sync.Mutex // serialises Sync and rebuilds; guards marks and idx replacement
	idx   bleve.Index
	marks map[int]mark
}

// mark is a life's watermark: rows before Offset are indexed; the last
// indexed line is [LastStart, Offset), and its last markSpan bytes at most
// (the '\n' included) hash to Sum: a line of any length is checked by
// one small read.
type mark struct {
	Offset    int64  `json:"offset"`
	LastStart int64  `json:"last_start"`
	Sum       string `json:"sha256"`
}

// Stats describe an open index.
type Stats struct {
	Docs    uint64        // rows indexed
	Lives   int           // lives with a watermark
	Rebuilt bool          // Open moved an old index aside or built a new one
	Reason  string        // why it was rebuilt ("missing", "schema …", …)
	Indexed int           // rows Open indexed (bulk build or tail)
	Took    time.Duration // Open's wall time
}

// Open opens (or builds) store s's cue index and brings it up to date.
// A missing index is built; a corrupt one, one of another schema, or one
// whose watermarks no longer match index.jsonl is moved aside and rebuilt.
// If another process owns the index, Open fails with ErrBusy. Cancelling
// ctx stops a build between batches; what was indexed is kept, and the
// next Open goes on from there.
func Open(ctx context.Context, s *episodes.Store, opt Options) (*Index, Stats, error) {
	start := time.Now()
	log := opt.Logger
	if log == nil {
		log = slog.Default()
	}
	lockPath, err := s.MetaPath("cue.lock")
	if err != nil {
		return nil, Stats{}, fmt.Errorf("cue index: %w", err)
	}
	lock, err := episodes.TryLock(lockPath)
	var held *episodes.HeldError
	if errors.As(err, &held) {
		return nil, Stats{}, fmt.Errorf("%w (%s: %s)", ErrBusy, held.Path, held.Holder)
	}
	if err != nil {
		return nil, Stats{}, fmt.Errorf("cue index: %w", err)
	}

	x := &Index{store: s, path: s.Path(episodes.MetaDir, "cue"), log: log, lock: lock}
	var st Stats
	reason := x.open()
	if reason != "" {
		st.Rebuilt, st.Reason = true, reason
		if err := x.rebuild(reason); err != nil {
			x.Close()
			return nil, st, err
		}
	}
	n, _, err := x.sync(ctx, opt.Progress)
	if err != nil {
		x.Close()
		return nil, st, err
	}
	st.Indexed = n
	if n >= 10*batchRows {
		if err := x.forceMerge(ctx); err != nil {
			log.Warn("cue index: merge after bulk build", "err", err)
		}
	}
	st.Docs, _ = x.idx.DocCount()
	st.Lives = len(x.marks)
	st.Took = time.Since(start)
	return x, st, nil
}

// open tries to open the existing index and checks its schema and
// watermarks; it returns why the index must be rebuilt, or "".
func (x *Index) open() string {
	if _, err := os.Stat(x.path); errors.Is(err, os.ErrNotExist) {
		return "missing"
	}
	idx, err := bleve.OpenUsing(x.path, map[string]interface{}{"bolt_timeout": "2s"})
	if err != nil {
		return "unreadable: " + err.Error()
	}
	v, err := idx.GetInternal([]byte("schema"))
	if err != nil || string(v) != SchemaVersion {
		idx.Close()
		return fmt.Sprintf("schema %q, want %q", v, SchemaVersion)
	}
	raw, err := idx.GetInternal([]byte("marks"))
	marks := map[int]mark{}
	if err == nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, &marks); err != nil {
			idx.Close()
			return "watermarks unreadable: " + err.Error()
		}
	}
	lives, err := x.store.Lives()
	if err != nil {
		idx.Close()
		return "lives: " + err.Error()
	}
	byN := map[int]episodes.Life{}
	for _, l := range lives {
		byN[l.N] = l
	}
	for n := range marks {
		if _, ok := byN[n]; !ok {
			idx.Close()
			return fmt.Sprintf("life %d is gone", n)
		}
	}
	for n, m := range marks {
		if why := m.check(byN[n].IndexPath()); why != "" {
			idx.Close()
			return fmt.Sprintf("life %d: %s", n, why)
		}
	}
	x.idx, x.marks = idx, marks
	return ""
}

// check reports why the watermark no longer describes the file at path.
func (m mark) check(path string) string {
	if m.Offset == 0 {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return "index.jsonl: " + err.Error()
	}
	defer f.Close()
	if m.LastStart < 0 || m.LastStart >= m.Offset {
		return "watermark out of range"
	}
	sum, err := m.sum(f)
	if err != nil {
		return fmt.Sprintf("index.jsonl shorter than the watermark (%d bytes)", m.Offset)
	}
	if sum != m.Sum {
		return fmt.Sprintf("the line at offset %d changed", m.LastStart)
	}
	return ""
}

// markSpan is how many bytes at the end of the last indexed line a
// watermark hashes.
const markSpan = 64 << 10

// sum hashes the last markSpan bytes (at most) of the line [LastStart,
// Offset) of f.
func (m mark) sum(f io.ReaderAt) (string, error) {
	from := max(m.LastStart, m.Offset-markSpan)
	buf := make([]byte, m.Offset-from)
	if _, err := f.ReadAt(buf, from); err != nil {
		return "", err
	}
	sum := sha256.Sum256(buf)
	return hex.EncodeToString(sum[:]), nil
}

// rebuild moves the index aside (if any) and creates an empty one.
func (x *Index) rebuild(reason string) error {
	if x.idx != nil {
		x.idx.Close()
		x.idx = nil
	}
	if _, err := os.Stat(x.path); err == nil {
		aside := x.path + ".old-" + time.Now().UTC().Format("20060102T150405.000000000")
		if err := os.Rename(x.path, aside); err != nil {
			return fmt.Errorf("cue index: move aside: %w", err)
		}
		x.log.Warn("cue index: rebuilding", "reason", reason, "old", aside)
		// The old copy is of no further use; failing to delete it loses nothing.
		go os.RemoveAll(aside)
	}
	idx, err := bleve.NewUsing(x.path, docMapping(), scorch.Name, scorch.Name, map[string]interface{}{"bolt_timeout": "2s"})
	if err != nil {
		return fmt.Errorf("cue index: create %s: %w", x.path, err)
	}
	if err := idx.SetInternal([]byte("schema"), []byte(SchemaVersion)); err != nil {
		idx.Close()
		return fmt.Errorf("cue index: %w", err)
	}
	x.idx, x.marks = idx, map[int]mark{}
	return nil
}

func (x *Index) forceMerge(ctx context.Context) error {
	adv, err := x.idx.Advanced()
	if err != nil {
		return err
	}
	sc, ok := adv.(*scorch.Scorch)
	if !ok {
		return nil
	}
	return sc.ForceMerge(ctx, nil)
}

// Close releases the index and its lock.
func (x *Index) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	var err error
	if x.idx != nil {
		err = x.idx.Close()
		x.idx = nil
	}
	x.lock.Unlock()
	x.lock = nil
	return err
}

// Sync indexes the rows appended to any life since the last Sync and
// returns how many it indexed. A life whose index.jsonl shrank (which the
// store's rules forbid) makes Sync rebuild the whole index.
func (x *Index) Sync() (int, error) {
	n, _, err := x.sync(context.Background(), nil)
	return n, err
}

// sync indexes what is new in every life and returns how many rows it
// indexed and the lives it looked at.
func (x *Index) sync(ctx context.Context, progress io.Writer) (int, []episodes.Life, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.idx == nil {
		return 0, nil, errors.New("cue index: closed")
	}
	var work []lifeWork
	var lives []episodes.Life
	for attempt := 0; ; attempt++ {
		var err error
		lives, err = x.store.Lives()
		if err != nil {
			return 0, nil, fmt.Errorf("cue index: %w", err)
		}
		var shrank string
		work, shrank, err = x.pending(lives)
		if err != nil {
			return 0, nil, fmt.Errorf("cue index: %w", err)
		}
		if shrank == "" {
			break
		}
		if attempt > 0 {
			return 0, nil, fmt.Errorf("cue index: %s", shrank)
		}
		if err := x.rebuild(shrank); err != nil {
			return 0, nil, err
		}
	}
	if len(work) == 0 {
		return 0, lives, nil
	}
	var total int64
	for _, w := range work {
		total += w.size - w.from
	}
	var bar *progressbar.ProgressBar
	if progress != nil && total > 4<<20 {
		bar = progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(progress),
			progressbar.OptionSetDescription("mfmd: indexing index.jsonl"),
			progressbar.OptionShowBytes(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish())
		defer bar.Finish()
	}
	indexed := 0
	for _, w := range work {
		n, err := x.indexLife(ctx, w.life, w.from, bar)
		indexed += n
		if err != nil {
			return indexed, lives, err
		}
	}
	return indexed, lives, nil
}

// lifeWork is a life's index.jsonl bytes [from, size) not yet indexed.
type lifeWork struct {
	life       episodes.Life
	from, size int64
}

// pending lists what is new in each life past its watermark, or says
// which life's index.jsonl shrank below it (the index must be rebuilt).
func (x *Index) pending(lives []episodes.Life) (work []lifeWork, shrank string, err error) {
	for _, l := range lives {
		m := x.marks[l.N]
		st, err := os.Stat(l.IndexPath())
		if errors.Is(err, os.ErrNotExist) {
			st, err = nil, nil
		}
		if err != nil {
			return nil, "", err
		}
		if st != nil && st.Size() == m.Offset {
			continue // the common case: nothing new, no read
		}
		size, err := completeSize(l.IndexPath())
		if err != nil {
			return nil, "", err
		}
		if size < m.Offset {
			return nil, fmt.Sprintf("life %d: index.jsonl shrank from %d to %d bytes", l.N, m.Offset, size), nil
		}
		if size > m.Offset {
			work = append(work, lifeWork{l, m.Offset, size})
		}
	}
	return work, "", nil
}

// indexLife indexes life l's rows from byte offset from, in batches, each
// batch carrying the watermark it reaches.
func (x *Index) indexLife(ctx context.Context, l episodes.Life, from int64, bar *progressbar.ProgressBar) (int, error) {
	f, err := os.Open(l.IndexPath())
	if err != nil {
		return 0, fmt.Errorf("cue index: %w", err)
	}
	defer f.Close()
	b := x.idx.NewBatch()
	m := x.marks[l.N]
	rows, pending := 0, 0
	flush := func() error {
		sum, err := m.sum(f)
		if err != nil {
			return fmt.Errorf("cue index: life %d: watermark: %w", l.N, err)
		}
		m.Sum = sum
		marks := make(map[int]mark, len(x.marks)+1)
		for k, v := range x.marks {
			marks[k] = v
		}
		marks[l.N] = m
		raw, _ := json.Marshal(marks)
		b.SetInternal([]byte("marks"), raw)
		if err := x.idx.Batch(b); err != nil {
			return fmt.Errorf("cue index: life %d: %w", l.N, err)
		}
		x.marks = marks
		b.Reset()
		pending = 0
		return nil
	}
	_, err = episodes.ScanFileMax(l.IndexPath(), from, episodes.MaxRowBytes, func(line episodes.Line) error {
		size := int64(len(line.Data)) + line.Long + 1
		m.LastStart, m.Offset = line.Offset, line.Offset+size
		if bar != nil {
			_ = bar.Add64(size)
		}
		pending++ // a malformed or over-long line moves the watermark too
		if line.Long > 0 {
			x.log.Warn("cue index: skipping an over-long row (mfmd fsck names it)", "file", l.IndexPath(), "line_offset", line.Offset, "bytes", line.Long, "max", episodes.MaxRowBytes)
		} else if len(bytes.TrimSpace(line.Data)) > 0 {
			r, err := episodes.ParseRow(line.Data)
			if err != nil {
				x.log.Warn("cue index: skipping a malformed row (mfmd fsck names it)", "file", l.IndexPath(), "line_offset", line.Offset, "err", err)
			} else {
				d := rowDoc(l.N, &r)
				d[fBlock] = blockTerm(l.N, line.Offset>>blockShift)
				if err := b.Index(docID(l.N, line.Offset, &r), d); err != nil {
					return fmt.Errorf("cue index: row %s: %w", r.ID, err)
				}
				rows++
			}
		}
		if pending >= batchRows {
			if err := flush(); err != nil {
				return err
			}
			return ctx.Err()
		}
		return nil
	})
	if err != nil {
		return rows, err
	}
	if pending > 0 {
		if err := flush(); err != nil {
			return rows, err
		}
	}
	return rows, nil
}

// completeSize is the length of path's prefix that ends in '\n' (0 when
// the file does not exist).
func completeSize(path string) (int64, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return episodes.CompleteSize(f)
}

// docID is a row's document id: life and byte offset, zero-padded so ids
// sort in chronological order (earlier lives first, then file order),
// then the row's exact x, y, z, first and last step, so candidates far
// from a near:, y: or steps: term are dropped without reading their row
// ("0002:0000000123456|-69.5|11|187.25|2696|2731").
func docID(life int, offset int64, r *episodes.Row) string {
	b := make([]byte, 0, 64)
	b = fmt.Appendf(b, "%04d:%013d", life, offset)
	for _, v := range []float64{r.X, r.Y, r.Z} {
		b = append(b, '|')
		b = strconv.AppendFloat(b, v, 'g', -1, 64)
	}
	for _, v := range []int64{r.FirstStep, r.LastStep} {
		b = append(b, '|')
		b = strconv.AppendInt(b, v, 10)
	}
	return string(b)
}

// docKey is what a document id tells about its row.
type docKey struct {
	life        int
	offset      int64
	x, y, z     float64
	first, last int64
}

func parseDocID(id string) (docKey, error) {
	bad := fmt.Errorf("cue index: bad document id %q", id)
	f := strings.Split(id, "|")
	if len(f) != 6 || len(f[0]) != 18 || f[0][4] != ':' {
		return docKey{}, bad
	}
	var k docKey
	var errs [7]error
	k.life, errs[0] = strconv.Atoi(f[0][:4])
	k.offset, errs[1] = strconv.ParseInt(f[0][5:], 10, 64)
	k.x, errs[2] = strconv.ParseFloat(f[1], 64)
	k.y, errs[3] = strconv.ParseFloat(f[2], 64)
	k.z, errs[4] = strconv.ParseFloat(f[3], 64)
	k.first, errs[5] = strconv.ParseInt(f[4], 10, 64)
	k.last, errs[6] = strconv.ParseInt(f[5], 10, 64)
	for _, err := range errs {
		if err != nil {
			return docKey{}, bad
		}
	}
	return k, nil
}

// Field names of an indexed row.
const (
	fWords  = "w"     // query.Tokens of the row's text fields, deduplicated
	fTag    = "tag"   // each tag
	fAction = "act"   // the action kind
	fEvent  = "ev"    // query.Tokens of the row's event lines, deduplicated
	fLife   = "life"  // the life number
	fCell   = "cell"  // the x/z cell at each of cellShifts: "3:-9_24"
	fY      = "fy"    // floor(y), as ladder terms
	fSteps  = "steps" // first_step..last_step, as span ladder terms
	fBlock  = "blk"   // life and MiB of index.jsonl the row starts in: "2:17"
	fTime   = "t"     // the row's time in Unix seconds, as ladder terms
)

// docMapping indexes only what queries prefilter by, with nothing stored
// and no doc values, _all disabled (the mapping choices that make bleve
// fast: bench/index.md), and text pre-tokenized with query.Tokens so an
// indexed term is exactly what Match compares.
func docMapping() mapping.IndexMapping {
	kw := func() *mapping.FieldMapping {
		f := bleve.NewKeywordFieldMapping()
		f.Store, f.IncludeInAll, f.IncludeTermVectors, f.DocValues = false, false, false, false
		return f
	}
	dm := bleve.NewDocumentStaticMapping()
	dm.AddSubDocumentMapping("_all", bleve.NewDocumentDisabledMapping())
	for _, f := range []string{fWords, fTag, fAction, fEvent, fLife, fCell, fY, fSteps, fTime, fBlock} {
		dm.AddFieldMappingsAt(f, kw())
	}
	im := bleve.NewIndexMapping()
	im.DefaultMapping = dm
	im.StoreDynamic, im.IndexDynamic, im.DocValuesDynamic = false, false, false
	return im
}

// cellTerm names the cell (cx, cz) of size 2^shift.
func cellTerm(shift uint, cx, cz int64) string {
	return strconv.FormatUint(uint64(shift), 10) + ":" + strconv.FormatInt(cx, 10) + "_" + strconv.FormatInt(cz, 10)
}

// cellTerms are a position's cells at every size.
func cellTerms(x, z float64) []string {
	ix, iz := floorInt(x), floorInt(z)
	out := make([]string, len(cellShifts))
	for i, s := range cellShifts {
		out[i] = cellTerm(s, ix>>s, iz>>s)
	}
	return out
}

// rowDoc is the indexed document of row r of life n.
func rowDoc(n int, r *episodes.Row) map[string]interface{} {
	seen := map[string]bool{}
	var words []string
	for _, t := range query.TextFields(r) {
		for _, w := range query.Tokens(t) {
			if !seen[w] {
				seen[w] = true
				words = append(words, w)
			}
		}
	}
	var events []string
	seenEv := map[string]bool{}
	for _, e := range r.Events {
		for _, w := range query.Tokens(e) {
			if !seenEv[w] {
				seenEv[w] = true
				events = append(events, w)
			}
		}
	}
	d := map[string]interface{}{
		fLife:  strconv.Itoa(n),
		fCell:  cellTerms(r.X, r.Z),
		fY:     ladderY.terms(floorInt(r.Y)),
		fSteps: ladderSteps.spanTerms(r.FirstStep, r.LastStep),
	}
	if len(words) > 0 {
		d[fWords] = words
	}
	if len(events) > 0 {
		d[fEvent] = events
	}
	if len(r.Tags) > 0 {
		d[fTag] = r.Tags
	}
	if a := r.Action(); a != "" {
		d[fAction] = a
	}
	if t, err := time.Parse(time.RFC3339Nano, r.Time); err == nil {
		d[fTime] = ladderTime.terms(t.Unix())
	}
	return d
}

func term(field, v string) bq.Query {
	q := bleve.NewTermQuery(v)
	q.SetField(field)
	return q
}

// anyTerm matches documents with any of values in field (none when
// values is empty).
func anyTerm(field string, values []string) bq.Query {
	switch len(values) {
	case 0:
		return bleve.NewMatchNoneQuery()
	case 1:
		return term(field, values[0])
	}
	qs := make([]bq.Query, len(values))
	for i, v := range values {
		qs[i] = term(field, v)
	}
	return bleve.NewDisjunctionQuery(qs...)
}

// floorInt is floor(v) as an int64, saturating (a ladder clamps it).
func floorInt(v float64) int64 {
	f := math.Floor(v)
	switch {
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// prefilter is a bleve query matching a superset of the rows q.Match
// accepts among the given lives (nil: all lives).
func prefilter(q *query.Query, lives []int) bq.Query {
	var must []bq.Query
	if lives != nil {
		ls := make([]string, len(lives))
		for i, n := range lives {
			ls[i] = strconv.Itoa(n)
		}
		must = append(must, anyTerm(fLife, ls))
	}
	for _, t := range q.Tags {
		must = append(must, term(fTag, t))
	}
	if len(q.Actions) > 0 {
		must = append(must, anyTerm(fAction, q.Actions))
	}
	for _, e := range q.Events {
		for _, t := range e {
			must = append(must, term(fEvent, t))
		}
	}
	if s := q.Steps; s != nil {
		must = append(must, ladderSteps.spanQuery(s.A, s.B))
	}
	if n := q.Near; n != nil {
		x0, x1, z0, z1 := floorInt(n.X-n.R), floorInt(n.X+n.R), floorInt(n.Z-n.R), floorInt(n.Z+n.R)
		for _, sh := range cellShifts {
			if float64((x1>>sh)-(x0>>sh)+1)*float64((z1>>sh)-(z0>>sh)+1) > maxNearCells || x1-x0 < 0 || z1-z0 < 0 {
				continue // too many cells of this size: try a coarser one
			}
			var cs []string
			for cx := x0 >> sh; cx <= x1>>sh; cx++ {
				for cz := z0 >> sh; cz <= z1>>sh; cz++ {
					cs = append(cs, cellTerm(sh, cx, cz))
				}
			}
			must = append(must, anyTerm(fCell, cs))
			break
		}
		if n.ThreeD {
			must = append(must, ladderY.query(floorInt(n.Y-n.R), floorInt(n.Y+n.R)))
		}
	}
	if y := q.Y; y != nil {
		if !math.IsInf(y.Min, -1) || !math.IsInf(y.Max, 1) {
			must = append(must, ladderY.query(floorInt(y.Min), floorInt(y.Max)))
		}
	}
	if !q.Since.IsZero() || !q.Until.IsZero() {
		lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
		if !q.Since.IsZero() {
			lo = q.Since.Unix()
		}
		if !q.Until.IsZero() {
			hi = q.Until.Unix()
		}
		must = append(must, ladderTime.query(lo, hi))
	}
	if !q.InMine {
		for _, w := range q.Words {
			for _, t := range w {
				must = append(must, term(fWords, t))
			}
		}
	}
	var base bq.Query = bleve.NewMatchAllQuery()
	if len(must) > 0 {
		base = bleve.NewConjunctionQuery(must...)
	}
	if len(q.NotTags) == 0 {
		return base
	}
	b := bleve.NewBooleanQuery()
	b.AddMust(base)
	for _, t := range q.NotTags {
		b.AddMustNot(term(fTag, t))
	}
	return b
}

// pageSize is how many candidates one bleve request returns.
const pageSize = 2000

// Search implements Searcher: it first indexes any rows appended since
// the last Sync (so a row is searchable as soon as it is complete in
// index.jsonl), then asks bleve for candidates in chronological order
// and keeps those query.Match accepts. If the index fails (a full disk,
// a damaged segment) the query is answered by a scan, with a warning:
// the index is a cache, and its failures cost time, never answers.
func (x *Index) Search(ctx context.Context, q *query.Query) ([]Hit, error) {
	hits, err := x.search(ctx, q)
	if err != nil && ctx.Err() == nil {
		x.log.Warn("cue index failed; answering by a scan", "err", err)
		return Scan{Store: x.store}.Search(ctx, q)
	}
	return hits, err
}

func (x *Index) search(ctx context.Context, q *query.Query) ([]Hit, error) {
	_, lives, err := x.sync(ctx, nil)
	if err != nil {
		return nil, err
	}
	current := lives[len(lives)-1].N
	var want []int
	byN := map[int]episodes.Life{}
	for _, l := range lives {
		if q.WantsLife(l.N, current) {
			want = append(want, l.N)
			byN[l.N] = l
		}
	}
	if len(want) == 0 {
		return nil, nil
	}
	if len(want) == len(lives) {
		want = nil // every life: no life clause
	}
	x.mu.Lock()
	idx := x.idx
	x.mu.Unlock()
	if idx == nil {
		return nil, errors.New("cue index: closed")
	}
	pf := prefilter(q, want)
	newestFirst := q.Last > 0
	if newestFirst {
		// bleve finds the newest N by sorting every candidate; when they
		// are dense, reading index.jsonl backwards finds them sooner.
		if budget, ok := tailBudget(idx, q); ok {
			var ls []episodes.Life
			for _, l := range lives {
				if _, ok := byN[l.N]; ok {
					ls = append(ls, l)
				}
			}
			hits, done, err := tailScan(ctx, x.store, ls, q, budget)
			if err != nil || done {
				return hits, err
			}
			// more rows than the estimate said: ask bleve after all
		}
	}
	rd := newRowReader(x.store, byN)
	defer rd.close()
	if !newestFirst {
		return collect(ctx, idx, pf, q, rd, false, 0)
	}
	return x.newest(ctx, idx, pf, q, rd, lives, byN)
}

// newest finds q's last q.Last matches: it searches the latest blocks of
// index.jsonl, then four times as many earlier ones, and so on, so that
// bleve sorts only the candidates of a recent window, not of the whole
// store. The hits come out in chronological order.
func (x *Index) newest(ctx context.Context, idx bleve.Index, pf bq.Query, q *query.Query, rd *rowReader, lives []episodes.Life, want map[int]episodes.Life) ([]Hit, error) {
	x.mu.Lock()
	var blocks []string
	for i := len(lives) - 1; i >= 0; i-- {
		if _, ok := want[lives[i].N]; ok {
			for b := (x.marks[lives[i].N].Offset - 1) >> blockShift; b >= 0; b-- {
				blocks = append(blocks, blockTerm(lives[i].N, b))
			}
		}
	}
	x.mu.Unlock()
	var hits []Hit
	for i, w := 0, 1; i < len(blocks) && len(hits) < q.Last; w *= 4 {
		j := min(i+w, len(blocks))
		got, err := collect(ctx, idx, bleve.NewConjunctionQuery(pf, anyTerm(fBlock, blocks[i:j])), q, rd, true, q.Last-len(hits))
		if err != nil {
			return nil, err
		}
		hits = append(hits, got...)
		i = j
	}
	slices.Reverse(hits)
	return hits, nil
}

// blockShift sizes the blocks of index.jsonl a row's fBlock term names:
// 1 MiB, about 2,700 rows (a variable so tests can make blocks small).
var blockShift = 20

func blockTerm(life int, block int64) string {
	return strconv.Itoa(life) + ":" + strconv.FormatInt(block, 10)
}

// collect pages through pf's candidates in id order (newest first when
// newestFirst) and keeps the rows q.Match accepts, at most need of them
// (0: all).
func collect(ctx context.Context, idx bleve.Index, pf bq.Query, q *query.Query, rd *rowReader, newestFirst bool, need int) ([]Hit, error) {
	var hits []Hit
	var after []string
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		size := pageSize
		if need > 0 {
			size = min(pageSize, max(2*(need-len(hits)), 16))
		}
		req := bleve.NewSearchRequestOptions(pf, size, 0, false)
		req.Score = "none"
		if newestFirst {
			req.SortBy([]string{"-_id"})
		} else {
			req.SortBy([]string{"_id"})
		}
		req.SearchAfter = after
		res, err := idx.SearchInContext(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("query: cue index: %w", err)
		}
		for _, d := range res.Hits {
			h, ok, err := rd.hit(d.ID, q)
			if err != nil {
				return nil, err
			}
			if ok {
				hits = append(hits, h)
				if need > 0 && len(hits) == need {
					return hits, nil
				}
			}
		}
		if len(res.Hits) < size {
			return hits, nil
		}
		after = []string{res.Hits[len(res.Hits)-1].ID}
	}
}

// tailBudget decides how a last:N query finds its newest matches. A query
// narrowing only by terms (tags, actions, words) whose matches are dense
// — estimated from bleve's document frequencies, as if independent — is
// answered by reading index.jsonl backwards; budget caps the rows read
// (a few times the estimate) before bleve is asked after all. Ranges
// (steps, near, y, time) are sparse: bleve answers those at once.
func tailBudget(idx bleve.Index, q *query.Query) (budget int, ok bool) {
	if q.Steps != nil || q.Near != nil || q.Y != nil || !q.Since.IsZero() || !q.Until.IsZero() {
		return 0, false
	}
	docs, err := idx.DocCount()
	if err != nil || docs == 0 {
		return 0, false
	}
	adv, err := idx.Advanced()
	if err != nil {
		return 0, false
	}
	r, err := adv.Reader()
	if err != nil {
		return 0, false
	}
	defer r.Close()
	df := func(field string, terms ...string) float64 {
		var n uint64
		for _, t := range terms {
			tr, err := r.TermFieldReader(context.Background(), []byte(t), field, false, false, false)
			if err != nil {
				return 1
			}
			n += tr.Count()
			tr.Close()
		}
		return float64(n) / float64(docs)
	}
	density := 1.0
	for _, t := range q.Tags {
		density *= df(fTag, t)
	}
	if len(q.Actions) > 0 {
		density *= df(fAction, q.Actions...)
	}
	for _, e := range q.Events {
		for _, t := range e {
			density *= df(fEvent, t)
		}
	}
	if !q.InMine {
		for _, w := range q.Words {
			for _, t := range w {
				density *= df(fWords, t)
			}
		}
	}
	if density <= 0 {
		return 0, false // a term no row has: bleve answers "none" at once
	}
	// Reading backwards costs about last/density rows, each decoded and
	// matched; bleve's sorted search about density·docs candidates.
	expected := float64(q.Last) / density
	if expected > maxTailRows || expected*tailCostRatio > density*float64(docs) {
		return 0, false
	}
	return int(max(4*expected, 256)), true
}

// tailCostRatio is the cost of reading and matching one row backwards
// over that of sorting one bleve candidate, as measured with bench/index.sh
// (bench/index.md).
const tailCostRatio = 45

// maxTailRows caps the rows a backwards read may be expected to need.
const maxTailRows = 4096

// rowReader reads indexed rows back from their lives' index.jsonl.
type rowReader struct {
	store  *episodes.Store
	lives  map[int]episodes.Life
	files  map[int]*os.File
	prefix map[int]string
	buf    []byte
}

func newRowReader(s *episodes.Store, lives map[int]episodes.Life) *rowReader {
	return &rowReader{store: s, lives: lives, files: map[int]*os.File{}, prefix: map[int]string{}, buf: make([]byte, 4096)}
}

func (rd *rowReader) close() {
	for _, f := range rd.files {
		f.Close()
	}
}

// hit reads the row of document id and reports whether it matches q.
func (rd *rowReader) hit(id string, q *query.Query) (Hit, bool, error) {
	k, err := parseDocID(id)
	if err != nil {
		return Hit{}, false, err
	}
	if !q.MatchPlace(k.x, k.y, k.z, k.first, k.last) {
		return Hit{}, false, nil // decided without reading the row
	}
	n, off := k.life, k.offset
	l, ok := rd.lives[n]
	if !ok {
		return Hit{}, false, nil // a life this query does not want (or one gone)
	}
	f := rd.files[n]
	if f == nil {
		f, err = os.Open(l.IndexPath())
		if err != nil {
			return Hit{}, false, fmt.Errorf("query: %w", err)
		}
		rd.files[n] = f
		p, err := LifePrefix(rd.store, l)
		if err != nil {
			return Hit{}, false, err
		}
		rd.prefix[n] = p
	}
	line, err := readLine(f, off, rd.buf)
	if err != nil {
		return Hit{}, false, fmt.Errorf("query: life %d: row at offset %d: %w", n, off, err)
	}
	r, err := episodes.ParseRow(line)
	if err != nil {
		return Hit{}, false, fmt.Errorf("query: life %d: row at offset %d: %w (the index is stale; it is rebuilt on the next start)", n, off, err)
	}
	if !q.Match(&r) {
		return Hit{}, false, nil
	}
	return Hit{Life: n, Row: r.Raw, Dir: EpisodeDir(rd.prefix[n], &r)}, true, nil
}

// readLine reads the line starting at off (without its '\n').
func readLine(f *os.File, off int64, buf []byte) ([]byte, error) {
	var line []byte
	for {
		n, err := f.ReadAt(buf, off)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return append(line, buf[:i]...), nil
		}
		line = append(line, buf[:n]...)
		off += int64(n)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, errors.New("no complete line")
			}
			return nil, err
		}
	}
}

// Watch keeps the index up to date until ctx is done, so appended rows
// are indexed before anyone asks (Search catches up by itself too). It
// syncs when fsnotify reports a change to the store root or previous/,
// and every poll interval in case events are missed (some network and
// overlay filesystems send none); poll <= 0 means one second.
func (x *Index) Watch(ctx context.Context, poll time.Duration) {
	x.watch(ctx, poll, true, nil)
}

// watch is Watch, with file events only when notify; listening, if not
// nil, is called once events and polling are set up.
func (x *Index) watch(ctx context.Context, poll time.Duration, notify bool, listening func()) {
	if poll <= 0 {
		poll = time.Second
	}
	var events chan fsnotify.Event
	if notify {
		w, err := fsnotify.NewWatcher()
		if err != nil {
			x.log.Warn("cue index: no file events; polling", "every", poll, "err", err)
		} else {
			defer w.Close()
			if err := w.Add(x.store.Root); err != nil {
				x.log.Warn("cue index: no file events; polling", "every", poll, "err", err)
			}
			_ = w.Add(x.store.Path(episodes.PreviousDir)) // may not exist yet; the root's events cover its creation
			events = w.Events
			go func() {
				for err := range w.Errors {
					x.log.Warn("cue index: file events", "err", err)
				}
			}()
		}
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	if listening != nil {
		listening()
	}
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			base := filepath.Base(ev.Name)
			if base != episodes.IndexFileName && base != episodes.PreviousDir && !strings.HasPrefix(base, "life_") {
				continue
			}
		case <-tick.C:
		}
		if _, err := x.Sync(); err != nil && ctx.Err() == nil {
			x.log.Warn("cue index: sync", "err", err)
		}
	}
}
