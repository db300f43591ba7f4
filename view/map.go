package view

import (
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"io"
	"io/fs"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/internal/filestamp"
)

// mapKind is how one grid kind is drawn: a colour in image maps, a
// character in text maps. Where kinds share a column (cells at several
// y), the column shows the most telling, the highest prio: where you got
// hurt, then what you opened, then what you placed (a tower is its placed
// blocks, not the walls you bumped into beside them), water, any other
// kind (lava in a paper run), where you walked, and last where you were
// blocked.
type mapKind struct {
	name string
	char byte
	col  color.NRGBA
	prio int
}

// mapKinds are the kinds a map knows, in legend order; any other kind
// (index len(mapKinds)) is drawn as otherKind.
var mapKinds = []mapKind{
	{episodes.CellWalked, '.', color.NRGBA{233, 196, 106, 255}, prioWalked},
	{episodes.CellPlaced, '+', color.NRGBA{42, 157, 143, 255}, 5},
	{episodes.CellOpened, 'o', color.NRGBA{155, 93, 229, 255}, 6},
	{episodes.CellBlocked, '#', color.NRGBA{60, 60, 60, 255}, 1},
	{episodes.CellHazard, '!', color.NRGBA{230, 57, 70, 255}, 7},
	{"water", '~', color.NRGBA{69, 123, 230, 255}, prioWater},
}

// The prio of walked cells (an episode position outranks them and
// blocked ones) and of water (listed in a legend only when present).
const prioWalked, prioWater = 2, 4

var otherKind = mapKind{"other", '?', color.NRGBA{160, 110, 60, 255}, 3}

const noKind = 255

func kindOf(i uint8) mapKind {
	if int(i) < len(mapKinds) {
		return mapKinds[i]
	}
	return otherKind
}

func kindIndex(name string) uint8 {
	for i, k := range mapKinds {
		if k.name == name {
			return uint8(i)
		}
	}
	return uint8(len(mapKinds))
}

// Map colours and marks.
var (
	colMapBG     = color.NRGBA{246, 246, 242, 255}
	colMapFrame  = color.NRGBA{250, 250, 250, 255}
	colMapLine   = color.NRGBA{0, 0, 0, 28}
	colMapInk    = color.NRGBA{20, 20, 20, 255}
	colMapEp     = color.NRGBA{0, 0, 0, 255}
	colMapCentre = color.NRGBA{255, 0, 200, 255}
)

// gridCell is one grid.jsonl row as a map needs it.
type gridCell struct {
	x, y, z int32
	kind    uint8
	other   string // the kind's name when it is not one of mapKinds
}

// posRow is an index row's position.
type posRow struct {
	id      string
	x, y, z float64
	step    int64
}

// tail follows one append-only JSONL file: the rows parsed so far and the
// offset past them, so a growing grid is read once.
type tail[T any] struct {
	mu       sync.Mutex
	off      int64
	items    []T
	rowBytes int64 // bytes of the rows read (over-long ones skipped)
}

// mapData holds the followed grid.jsonl and index.jsonl files by life.
type mapData struct {
	mu    sync.Mutex
	grids map[string]*tail[gridCell]
	index map[string]*tail[posRow]
}

func tailFor[T any](mu *sync.Mutex, m map[string]*tail[T], name string) *tail[T] {
	mu.Lock()
	defer mu.Unlock()
	t := m[name]
	if t == nil {
		t = &tail[T]{}
		m[name] = t
	}
	return t
}

// follow reads the complete rows added to the store file name since the
// last call (all of them when the file shrank), parsing each with parse
// (false: skip the row). A file larger than maxBytes is an error; a
// missing file has no rows.
func follow[T any](v *Viewer, t *tail[T], name string, maxBytes int64, parse func([]byte) (T, bool)) ([]T, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f, err := v.open(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			t.off, t.items = 0, nil
			return nil, nil
		}
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() < t.off {
		t.off, t.items, t.rowBytes = 0, nil, 0
	}
	if st.Size() == t.off {
		return t.items, nil
	}
	if _, err := f.Seek(t.off, io.SeekStart); err != nil {
		return nil, err
	}
	// Rows past episodes.MaxRowBytes are skipped unread and do not count
	// towards maxBytes, the rows a map holds: one huge row cannot disable
	// the map.
	items, rowBytes := t.items, t.rowBytes
	errTooMany := fmt.Errorf("%s: its rows take more than the %d a map reads (bytes)", name, maxBytes)
	end, err := episodes.ScanLinesMax(io.LimitReader(f, st.Size()-t.off), t.off, episodes.MaxRowBytes, func(l episodes.Line) error {
		if l.Long > 0 {
			return nil
		}
		if rowBytes += int64(len(l.Data)) + 1; rowBytes > maxBytes {
			return errTooMany
		}
		if it, ok := parse(l.Data); ok {
			items = append(items, it)
		}
		return nil
	})
	if errors.Is(err, errTooMany) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	t.off, t.items, t.rowBytes = end, items, rowBytes
	return items, nil
}

func parseGridCell(line []byte) (gridCell, bool) {
	var r struct {
		Cell []float64 `json:"cell"`
		Kind string    `json:"kind"`
	}
	if json.Unmarshal(line, &r) != nil || len(r.Cell) != 3 || r.Kind == "" {
		return gridCell{}, false
	}
	var c [3]int32
	for i, f := range r.Cell {
		if math.IsNaN(f) || math.Abs(f) > maxCoord*32 {
			return gridCell{}, false
		}
		c[i] = int32(math.Floor(f))
	}
	g := gridCell{x: c[0], y: c[1], z: c[2], kind: kindIndex(r.Kind)}
	if int(g.kind) == len(mapKinds) {
		g.other = r.Kind
	}
	return g, true
}

func parsePosRow(line []byte) (posRow, bool) {
	var r struct {
		ID       string   `json:"id"`
		X        *float64 `json:"x"`
		Y        *float64 `json:"y"`
		Z        *float64 `json:"z"`
		LastStep int64    `json:"last_step"`
	}
	if json.Unmarshal(line, &r) != nil || r.X == nil || r.Z == nil {
		return posRow{}, false
	}
	p := posRow{id: r.ID, x: *r.X, z: *r.Z, step: r.LastStep}
	if r.Y != nil {
		p.y = *r.Y
	}
	if math.IsNaN(p.x) || math.IsNaN(p.z) || math.Abs(p.x) > maxCoord*32 || math.Abs(p.z) > maxCoord*32 {
		return posRow{}, false
	}
	return p, true
}

func (v *Viewer) mapFiles(s Spec) (grid, index string) {
	return s.Life + episodes.GridFileName, s.Life + episodes.IndexFileName
}

// mapStamp identifies the inputs of a map for its cache key: grid.jsonl,
// index.jsonl and, for here, now/state.json.
func (v *Viewer) mapStamp(s Spec) string {
	grid, index := v.mapFiles(s)
	names := []string{grid, index}
	if s.Map.Here && s.Life == "" {
		names = append(names, episodes.NowDir+"/state.json")
	}
	var b strings.Builder
	for _, n := range names {
		if st, err := v.root.Stat(n); err == nil {
			b.WriteString(filestamp.Of(st).String() + ";")
		} else {
			b.WriteString("-;")
		}
	}
	return b.String()
}

// mapModel is what a map shows: the kind of each cell of a square around a
// centre, and the episode positions inside it.
type mapModel struct {
	cx, cz, r  int
	n          int // 2r+1
	northPlusZ bool
	kinds      []uint8          // n*n, by row then column; noKind: nothing recorded
	others     map[int]string   // cell index -> kind name, for kinds outside mapKinds
	eps        map[int][]string // cell index -> episode ids, in index order
	epOrder    []int            // cells with episodes, in order of first episode
	counts     map[string]int   // columns showing each kind name
	holding    map[string]int   // columns holding each kind name at some y
	title      string
	axes       string // where north and the blocks of positions come from
	where      string // the centre, described
	band       string // "all y" or "y -5..20"
}

// colX is the x of column c; rowZ the z of row j.
func (m *mapModel) colX(c int) int { return m.cx - m.r + c }
func (m *mapModel) rowZ(j int) int {
	if m.northPlusZ {
		return m.cz + m.r - j
	}
	return m.cz - m.r + j
}

// index returns the cell index of x,z, or -1 outside the map.
func (m *mapModel) index(x, z int) int {
	c := x - (m.cx - m.r)
	j := z - (m.cz - m.r)
	if m.northPlusZ {
		j = (m.cz + m.r) - z
	}
	if c < 0 || c >= m.n || j < 0 || j >= m.n {
		return -1
	}
	return j*m.n + c
}

// buildMap reads the life's grid and index and lays out the map s asks for.
func (v *Viewer) buildMap(s Spec) (*mapModel, error) {
	o := s.Map
	r := o.R
	if r == 0 {
		r = DefaultMapRadius
	}
	if r > v.lim.MaxMapRadius {
		return nil, fmt.Errorf("r=%d: at most %d blocks", r, v.lim.MaxMapRadius)
	}
	gridName, indexName := v.mapFiles(s)
	gt := tailFor(&v.maps.mu, v.maps.grids, gridName)
	it := tailFor(&v.maps.mu, v.maps.index, indexName)
	cells, err := follow(v, gt, gridName, v.lim.MaxGridBytes, parseGridCell)
	if err != nil {
		return nil, err
	}
	pos, err := follow(v, it, indexName, v.lim.MaxGridBytes, parsePosRow)
	if err != nil {
		return nil, err
	}
	cx, cz, where := o.X, o.Z, fmt.Sprintf("x=%d z=%d", o.X, o.Z)
	if o.Here {
		if where, cx, cz, err = v.herePos(s, pos, v.store.Axes()); err != nil {
			return nil, err
		}
	}
	ax := v.store.Axes()
	m := newMapModel(o, ax, r, cx, cz, where, cells, pos)
	north := "-z"
	if m.northPlusZ {
		north = "+z"
	}
	if !o.NorthPlusZ && !o.NorthMinusZ && ax.North != "" {
		north += " (store axes)"
	}
	m.title = fmt.Sprintf("map %s  r=%d  %s  north=%s", m.where, r, m.band, north)
	m.axes = axesText(o, ax)
	if s.Life != "" {
		m.title = strings.TrimSuffix(s.Life, "/") + " " + m.title
	}
	return m, nil
}

// newMapModel lays out the cells and episode positions of a map of radius
// r around cx,cz. Episode positions fall in the block ax says (round or
// floor), north is where o or else ax puts it.
func newMapModel(o MapOps, ax episodes.Axes, r, cx, cz int, where string, cells []gridCell, pos []posRow) *mapModel {
	m := &mapModel{r: r, n: 2*r + 1, northPlusZ: o.NorthPlusZ || (!o.NorthMinusZ && ax.NorthPlusZ()), cx: cx, cz: cz, where: where,
		others: map[int]string{}, eps: map[int][]string{}, counts: map[string]int{}, holding: map[string]int{}, band: "all y"}
	if o.YBand {
		m.band = fmt.Sprintf("y %d..%d", o.YMin, o.YMax)
	}
	inBand := func(y int) bool { return !o.YBand || (o.YMin <= y && y <= o.YMax) }
	m.kinds = make([]uint8, m.n*m.n)
	for i := range m.kinds {
		m.kinds[i] = noKind
	}
	held := map[int]map[string]bool{} // cell index -> the kinds its column holds
	for _, c := range cells {
		if !inBand(int(c.y)) {
			continue
		}
		i := m.index(int(c.x), int(c.z))
		if i < 0 {
			continue
		}
		name := kindOf(c.kind).name
		if c.other != "" {
			name = c.other
		}
		if held[i] == nil {
			held[i] = map[string]bool{}
		}
		held[i][name] = true
		if cur := m.kinds[i]; cur == noKind || kindOf(c.kind).prio > kindOf(cur).prio {
			m.kinds[i] = c.kind
			if c.other != "" {
				m.others[i] = c.other
			} else {
				delete(m.others, i)
			}
		}
	}
	for i, k := range m.kinds {
		if k == noKind {
			continue
		}
		name := kindOf(k).name
		if o, ok := m.others[i]; ok {
			name = o
		}
		m.counts[name]++
	}
	for _, kinds := range held {
		for name := range kinds {
			m.holding[name]++
		}
	}
	for _, p := range pos {
		if !inBand(ax.Block(p.y)) {
			continue
		}
		i := m.index(ax.Block(p.x), ax.Block(p.z))
		if i < 0 {
			continue
		}
		if _, ok := m.eps[i]; !ok {
			m.epOrder = append(m.epOrder, i)
		}
		m.eps[i] = append(m.eps[i], p.id)
	}
	return m
}

// herePos is the current position: now/state.json for the current life,
// else the last index row with a position.
func (v *Viewer) herePos(s Spec, pos []posRow, ax episodes.Axes) (string, int, int, error) {
	if s.Life == "" {
		if st, ok := v.readState(episodes.NowDir + "/state.json"); ok && st.Pos != nil &&
			math.Abs(st.Pos.X) <= maxCoord*32 && math.Abs(st.Pos.Z) <= maxCoord*32 {
			where := fmt.Sprintf("here (now/state.json%s: %s)", stepText(st.Step), xyzText(st.Pos.X, st.Pos.Y, st.Pos.Z))
			return where, ax.Block(st.Pos.X), ax.Block(st.Pos.Z), nil
		}
	}
	if len(pos) == 0 {
		return "", 0, 0, fmt.Errorf("no current position (no now/state.json and no index row with x,z): use map/at=X,Z.png")
	}
	p := pos[len(pos)-1]
	where := fmt.Sprintf("here (%s, step %d: %s)", p.id, p.step, xyzText(p.x, p.y, p.z))
	return where, ax.Block(p.x), ax.Block(p.z), nil
}

// xyzText prints a position with one decimal (never "-0.0").
func xyzText(x, y, z float64) string {
	f := func(v float64) string {
		s := strconv.FormatFloat(v, 'f', 1, 64)
		if s == "-0.0" {
			s = "0.0"
		}
		return s
	}
	return f(x) + "," + f(y) + "," + f(z)
}

func stepText(step *int64) string {
	if step == nil {
		return ""
	}
	return fmt.Sprintf(", step %d", *step)
}

func (v *Viewer) renderMap(s Spec) ([]byte, error) {
	m, err := v.buildMap(s)
	if err != nil {
		return nil, err
	}
	if s.Map.Text {
		return m.text(), nil
	}
	cell := s.Map.Cell
	if cell == 0 {
		cell = DefaultMapCell
	}
	img, err := m.image(cell, &v.lim)
	if err != nil {
		return nil, err
	}
	return v.encode(img, s.Format)
}

// charAt is the text map's character for cell i.
func (m *mapModel) charAt(i int) byte {
	if i == m.index(m.cx, m.cz) {
		return '@'
	}
	k := m.kinds[i]
	if _, ep := m.eps[i]; ep && (k == noKind || kindOf(k).prio <= prioWalked) {
		return '*'
	}
	if k == noKind {
		return ' '
	}
	return kindOf(k).char
}

// legendKinds lists the kinds to show in a legend: the known ones, then
// any other kind present.
func (m *mapModel) legendKinds() []string {
	var names []string
	for _, k := range mapKinds {
		if k.prio != prioWater || m.holding[k.name] > 0 { // water only when present
			names = append(names, k.name)
		}
	}
	var extra []string
	for name := range m.holding {
		if kindIndex(name) == uint8(len(mapKinds)) {
			extra = append(extra, name)
		}
	}
	slices.Sort(extra)
	return append(names, extra...)
}

// maxTextEpisodeCells bounds the episode list under a text map.
const maxTextEpisodeCells = 40

// text renders the map one character per block, with coordinates and a
// legend, for agents that read.
func (m *mapModel) text() []byte {
	var b strings.Builder
	m.textHeader(&b)
	m.textGrid(&b)
	m.textLegend(&b)
	m.textEpisodes(&b)
	return []byte(b.String())
}

// textHeader says how columns and rows map to x and z, and what lies at
// the centre.
func (m *mapModel) textHeader(b *strings.Builder) {
	b.WriteString(m.title + "\n")
	dir := "-z (north) is up, z grows downwards"
	if m.northPlusZ {
		dir = "+z (north) is up, z grows upwards"
	}
	fmt.Fprintf(b, "%dx%d blocks; x grows to the right: column c (from 0, inside the |...| border) is x=%d+c; %s: row r is z=%d%sr\n",
		m.n, m.n, m.colX(0), dir, m.rowZ(0), map[bool]string{false: "+", true: "-"}[m.northPlusZ])
	centre := "nothing recorded"
	if i := m.index(m.cx, m.cz); i >= 0 && m.kinds[i] != noKind {
		centre = kindOf(m.kinds[i]).name
		if o, ok := m.others[i]; ok {
			centre = o
		}
	}
	fmt.Fprintf(b, "the @ is x=%d z=%d: %s\n", m.cx, m.cz, centre)
	fmt.Fprintf(b, "axes: %s\n", m.axes)
}

// textGrid writes the x labels and ruler, then one line per row of
// cells, labelled with its z.
func (m *mapModel) textGrid(b *strings.Builder) {
	zw := 0
	for j := 0; j < m.n; j++ {
		zw = max(zw, len(strconv.Itoa(m.rowZ(j))))
	}
	pre := strings.Repeat(" ", zw+3) // "z=" + number + " "
	step := 10
	if m.n <= 20 {
		step = 5
	}
	labels, ruler := []byte(strings.Repeat(" ", m.n+8)), []byte(strings.Repeat(" ", m.n))
	last := -1
	for c := 0; c < m.n; c++ {
		x := m.colX(c)
		if floorMod(x, step) != 0 {
			continue
		}
		ruler[c] = '|'
		s := strconv.Itoa(x)
		if c > last {
			copy(labels[c:], s)
			last = c + len(s)
		}
	}
	b.WriteString(strings.TrimRight(strings.Repeat(" ", zw+1)+"x  "+string(labels), " ") + "\n")
	b.WriteString(strings.TrimRight(pre+" "+string(ruler), " ") + "\n")
	row := make([]byte, m.n)
	for j := 0; j < m.n; j++ {
		for c := 0; c < m.n; c++ {
			row[c] = m.charAt(j*m.n + c)
		}
		fmt.Fprintf(b, "%-*s |%s|\n", zw+2, "z="+strconv.Itoa(m.rowZ(j)), row)
	}
}

// textLegend names each character and counts the cells of each kind.
func (m *mapModel) textLegend(b *strings.Builder) {
	b.WriteString("legend: @ centre  * episode position (over walked, blocked or nothing)")
	for _, name := range m.legendKinds() {
		k := kindOf(kindIndex(name))
		fmt.Fprintf(b, "  %c %s", k.char, name)
	}
	b.WriteString("  (space) nothing recorded\n")
	b.WriteString("columns holding each kind (a column shows the most telling: ! o + ~ ? . #):")
	any := false
	for _, name := range m.legendKinds() {
		if m.holding[name] > 0 {
			b.WriteString(" " + m.countsText(name))
			any = true
		}
	}
	if !any {
		b.WriteString(" none recorded here")
	}
	b.WriteString("\n")
}

// textEpisodes lists the episodes whose positions are in view, by cell.
func (m *mapModel) textEpisodes(b *strings.Builder) {
	fmt.Fprintf(b, "episode positions (index rows) in view: %d cell(s)\n", len(m.epOrder))
	for k, i := range m.epOrder {
		if k == maxTextEpisodeCells {
			fmt.Fprintf(b, "  ... %d more cell(s): use a smaller r= or map/at=X,Z\n", len(m.epOrder)-k)
			break
		}
		ids := m.eps[i]
		more := ""
		if len(ids) > 6 {
			more = fmt.Sprintf(" (+%d more)", len(ids)-6)
			ids = ids[:6]
		}
		fmt.Fprintf(b, "  x=%d z=%d: %s%s\n", m.colX(i%m.n), m.rowZ(i/m.n), strings.Join(ids, " "), more)
	}
}

func floorMod(a, b int) int { return ((a % b) + b) % b }

// mapTickStep is the spacing of coordinate labels, in blocks: at least
// minPx pixels apart.
func mapTickStep(cell, minPx int) int {
	for _, s := range []int{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000} {
		if s*cell >= minPx {
			return s
		}
	}
	return 10000
}

// Image map margins.
const mapPad, mapArrowW = 6, 26

// origin is the top-left corner of the map's cells in its image.
func (m *mapModel) origin() (ml, mt int) {
	zw := 0
	for j := 0; j < m.n; j++ {
		zw = max(zw, textWidth(strconv.Itoa(m.rowZ(j))))
	}
	return mapPad + zw + 6, labelH + gap + lineH + 6
}

// image renders the map with cell pixels per block: a title, coordinate
// labels along the top (x) and left (z), a north arrow, a scale bar and a
// legend with the number of cells of each kind.
func (m *mapModel) image(cell int, lim *Limits) (*image.NRGBA, error) {
	entries := m.legendEntries()
	l := m.layout(cell, entries)
	if err := checkOut(l.w, l.h, lim); err != nil {
		return nil, fmt.Errorf("map: %w (use a smaller r= or cell=)", err)
	}
	dst := image.NewNRGBA(image.Rect(0, 0, l.w, l.h))
	fill(dst, dst.Rect, colMapFrame)
	drawText(dst, mapPad, gap+padText, fitText(m.title, l.w-2*mapPad), colMapInk)
	m.drawCells(dst, l)
	m.drawCoordinates(dst, l)
	m.drawNorthArrow(dst, l)
	drawScaleBar(dst, l)
	drawLegend(dst, l, entries)
	return dst, nil
}

// mapLayout places the parts of an image map.
type mapLayout struct {
	cell   int // pixels per block
	side   int // the cells' width and height
	ml, mt int // the cells' top-left corner
	w, h   int // the image
	mapH   int // the height the cells and the north arrow take
	tick   int // blocks between x labels, and the scale bar's length
	scaleY int // the scale bar's top
}

// Image map parts: legend swatch size, scale bar height.
const mapSwatch, mapScaleH = 10, lineH + 8

func (m *mapModel) layout(cell int, entries []legendEntry) mapLayout {
	l := mapLayout{cell: cell, side: m.n * cell}
	l.ml, l.mt = m.origin()
	xw := 0
	for c := 0; c < m.n; c++ {
		xw = max(xw, textWidth(strconv.Itoa(m.colX(c))))
	}
	l.tick = mapTickStep(cell, max(40, xw+8))
	l.w = max(l.ml+l.side+mapArrowW+mapPad, 420, textWidth(m.title)+2*mapPad)
	lines, x := 1, mapPad
	for _, e := range entries {
		ew := e.width()
		if x+ew > l.w-mapPad && x > mapPad {
			lines++
			x = mapPad
		}
		x += ew
	}
	l.mapH = max(l.side, 50) // room for the north arrow
	l.scaleY = l.mt + l.mapH + 8
	l.h = l.scaleY + mapScaleH + lines*(lineH+4) + mapPad
	return l
}

// legendEntry is one entry of an image map's legend.
type legendEntry struct {
	col  color.NRGBA
	text string
	mark int // 0 swatch, 1 episode dot, 2 centre box
}

func (e legendEntry) width() int { return mapSwatch + 4 + textWidth(e.text) + 12 }

// legendEntries are the kinds with their counts, then episode positions
// and the centre.
func (m *mapModel) legendEntries() []legendEntry {
	var entries []legendEntry
	for _, name := range m.legendKinds() {
		entries = append(entries, legendEntry{kindOf(kindIndex(name)).col, m.countsText(name), 0})
	}
	return append(entries, legendEntry{colMapEp, fmt.Sprintf("episode position %d", countEps(m.eps)), 1},
		legendEntry{colMapCentre, "centre", 2})
}

// drawCells draws each cell's kind, a grid when cells are large enough,
// episode positions as dots and a box around the centre.
func (m *mapModel) drawCells(dst *image.NRGBA, l mapLayout) {
	ml, mt, cell, side := l.ml, l.mt, l.cell, l.side
	area := image.Rect(ml, mt, ml+side, mt+side)
	fill(dst, area, colMapBG)
	for i, k := range m.kinds {
		if k == noKind {
			continue
		}
		c, j := i%m.n, i/m.n
		fill(dst, image.Rect(ml+c*cell, mt+j*cell, ml+(c+1)*cell, mt+(j+1)*cell), kindOf(k).col)
	}
	if cell >= 6 {
		for c := 1; c < m.n; c++ {
			blend(dst, image.Rect(ml+c*cell, mt, ml+c*cell+1, mt+side), colMapLine)
			blend(dst, image.Rect(ml, mt+c*cell, ml+side, mt+c*cell+1), colMapLine)
		}
	}
	dot := max(cell/3, 1)
	for i := range m.eps {
		c, j := i%m.n, i/m.n
		x0, y0 := ml+c*cell+(cell-dot)/2, mt+j*cell+(cell-dot)/2
		fill(dst, image.Rect(x0, y0, x0+dot, y0+dot), colMapEp)
	}
	if i := m.index(m.cx, m.cz); i >= 0 {
		c, j := i%m.n, i/m.n
		outline(dst, image.Rect(ml+c*cell-2, mt+j*cell-2, ml+(c+1)*cell+2, mt+(j+1)*cell+2).Intersect(area.Inset(-2)), 2, colMapCentre)
	}
}

// drawCoordinates labels x along the top, every tick blocks, and z down
// the left.
func (m *mapModel) drawCoordinates(dst *image.NRGBA, l mapLayout) {
	ml, mt, cell := l.ml, l.mt, l.cell
	for c := 0; c < m.n; c++ {
		if x := m.colX(c); floorMod(x, l.tick) == 0 {
			cxp := ml + c*cell + cell/2
			fill(dst, image.Rect(cxp, mt-4, cxp+1, mt), colMapInk)
			s := strconv.Itoa(x)
			lx := min(max(cxp-textWidth(s)/2, 0), l.w-textWidth(s))
			drawText(dst, lx, mt-5-lineH, s, colMapInk)
		}
	}
	ztick := mapTickStep(cell, lineH+6)
	for j := 0; j < m.n; j++ {
		if z := m.rowZ(j); floorMod(z, ztick) == 0 {
			cyp := mt + j*cell + cell/2
			fill(dst, image.Rect(ml-4, cyp, ml, cyp+1), colMapInk)
			s := strconv.Itoa(z)
			drawText(dst, ml-5-textWidth(s), min(max(cyp-lineH/2, mt-2), l.h-lineH), s, colMapInk)
		}
	}
	drawText(dst, mapPad, mt-5-lineH, "x", colMapInk)
}

// drawNorthArrow draws the north arrow right of the map, naming north's
// direction (-z or +z).
func (m *mapModel) drawNorthArrow(dst *image.NRGBA, l mapLayout) {
	ax := l.ml + l.side + mapArrowW/2 + 2
	drawNorth(dst, ax, l.mt+2)
	north := "-z"
	if m.northPlusZ {
		north = "+z"
	}
	drawText(dst, ax-textWidth(north)/2, l.mt+34, north, colMapInk)
}

// drawScaleBar draws a bar of tick blocks under the map.
func drawScaleBar(dst *image.NRGBA, l mapLayout) {
	ml, sy := l.ml, l.scaleY
	bar := l.tick * l.cell
	fill(dst, image.Rect(ml, sy+4, ml+bar, sy+6), colMapInk)
	fill(dst, image.Rect(ml, sy, ml+1, sy+10), colMapInk)
	fill(dst, image.Rect(ml+bar-1, sy, ml+bar, sy+10), colMapInk)
	unit := "blocks"
	if l.tick == 1 {
		unit = "block"
	}
	drawText(dst, ml+bar+6, sy-1, fmt.Sprintf("%d %s (%d px per block)", l.tick, unit, l.cell), colMapInk)
}

// drawLegend draws the entries under the scale bar, wrapped to the width.
func drawLegend(dst *image.NRGBA, l mapLayout, entries []legendEntry) {
	x, y := mapPad, l.scaleY+mapScaleH
	for _, e := range entries {
		ew := e.width()
		if x+ew > l.w-mapPad && x > mapPad {
			x, y = mapPad, y+lineH+4
		}
		r := image.Rect(x, y+2, x+mapSwatch, y+2+mapSwatch)
		switch e.mark {
		case 0:
			fill(dst, r, e.col)
			outline(dst, r, 1, color.NRGBA{0, 0, 0, 60})
		case 1:
			fill(dst, r, colMapBG)
			fill(dst, image.Rect(x+3, y+5, x+7, y+9), e.col)
		case 2:
			fill(dst, r, colMapBG)
			outline(dst, r, 2, e.col)
		}
		drawText(dst, x+mapSwatch+4, y, e.text, colMapInk)
		x += ew
	}
}

func countEps(eps map[int][]string) int {
	n := 0
	for _, ids := range eps {
		n += len(ids)
	}
	return n
}

// outline draws a border of width t just inside r.
func outline(dst *image.NRGBA, r image.Rectangle, t int, c color.NRGBA) {
	blend(dst, image.Rect(r.Min.X, r.Min.Y, r.Max.X, r.Min.Y+t), c)
	blend(dst, image.Rect(r.Min.X, r.Max.Y-t, r.Max.X, r.Max.Y), c)
	blend(dst, image.Rect(r.Min.X, r.Min.Y+t, r.Min.X+t, r.Max.Y-t), c)
	blend(dst, image.Rect(r.Max.X-t, r.Min.Y+t, r.Max.X, r.Max.Y-t), c)
}

// drawNorth draws an upward arrow with an N beneath, its tip at (x, y).
func drawNorth(dst *image.NRGBA, x, y int) {
	for i := 0; i < 8; i++ { // the head
		fill(dst, image.Rect(x-i, y+i, x+i+1, y+i+1), colMapInk)
	}
	fill(dst, image.Rect(x-1, y+8, x+2, y+18), colMapInk)
	drawText(dst, x-charW/2, y+19, "N", colMapInk)
}

// axesText says where a map's north and its episodes' blocks come from.
func axesText(o MapOps, ax episodes.Axes) string {
	north := "north=-z, the default (the store declares no axes)"
	switch {
	case o.NorthPlusZ || o.NorthMinusZ:
		north = "north as @north= asks"
	case ax.North != "":
		north = "north=" + ax.North + " as the store declares (mfm-store.json axes)"
	}
	blocks := "positions in block floor(x), floor(z)"
	if ax.Cells == "round" {
		blocks = "positions in the nearest block (round), as the store declares"
	}
	return north + "; " + blocks
}

// countsText is the legend's count of a kind: the columns holding it,
// and how many show it when fewer do ("walked 46 (31 shown)").
func (m *mapModel) countsText(name string) string {
	if shown := m.counts[name]; shown < m.holding[name] {
		return fmt.Sprintf("%s %d (%d shown)", name, m.holding[name], shown)
	}
	return fmt.Sprintf("%s %d", name, m.holding[name])
}
