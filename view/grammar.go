package view

import (
	"fmt"
	"image"
	"regexp"
	"strconv"
	"strings"
)

// Kind is what a view shows.
type Kind int

// View kinds.
const (
	FrameView Kind = iota + 1 // a frame with operations (crop, zoom, grid, then-and-now)
	SheetView                 // a contact sheet of an episode's frames
	MapView                   // a top-down map of grid.jsonl
)

// SheetOps select and lay out an episode's contact sheet.
type SheetOps struct {
	Steps    bool  // select frames by step
	From, To int64 // the step range, inclusive, when Steps
	Cols     int   // 0: automatic
	TileW    int   // 0: DefaultTileW
}

// MapOps choose a map's centre, extent and look.
type MapOps struct {
	Here       bool // centre on the current (or the life's last) position
	X, Z       int  // centre cell when not Here
	R          int  // radius in cells; 0: DefaultMapRadius
	YBand      bool // keep only cells with YMin <= y <= YMax
	YMin, YMax int  // the y band
	Cell       int  // pixels per cell; 0: DefaultMapCell
	Text       bool // .txt: one character per cell
}

// Map defaults.
const (
	DefaultMapRadius = 16
	DefaultMapCell   = 8
)

// Spec is a parsed view name.
type Spec struct {
	Kind   Kind
	Life   string // "previous/life_N/" or "" for the current life (sheets and maps)
	Base   string // FrameView: the frame file; SheetView: the episode directory (store-relative)
	Frame  FrameOps
	Sheet  SheetOps
	Map    MapOps
	Format Format // PNG or JPEG (a text map is PNG here and Text set)
}

// Grammar hard bounds, independent of Limits (which are checked when
// rendering): they keep parsed numbers sane.
const (
	maxCoord   = 1 << 20
	maxZoomArg = 64
)

var (
	reLifePrefix = regexp.MustCompile(`^(previous/life_[1-9][0-9]*/)?`)
	reEpisodeDir = regexp.MustCompile(`^(previous/life_[1-9][0-9]*/)?episodes/ep_[0-9]{6,}$`)
	reFrameDir   = regexp.MustCompile(`^((previous/life_[1-9][0-9]*/)?episodes/ep_[0-9]{6,}(/[^/@]+)*|now)$`)
)

// Parse reads a view name rel (a slash path relative to the mount root).
// ok is false when rel is not a view name at all; err reports a view name
// that is malformed or not spelled canonically (the message shows the
// canonical spelling, or what is accepted).
func Parse(rel string) (s Spec, ok bool, err error) {
	s, ok, err = parseLenient(rel)
	if !ok || err != nil {
		return s, ok, err
	}
	if c := s.Canonical(); c != rel {
		return s, true, fmt.Errorf("view %q: write it as %q (one spelling per view)", rel, c)
	}
	return s, true, nil
}

// splitExt splits name into stem and a view extension, lower-cased.
func splitExt(name string) (stem, ext string, ok bool) {
	e := extOf(name)
	switch asciiLower(e) {
	case ".png", ".jpg", ".jpeg", ".txt":
		return name[:len(name)-len(e)], asciiLower(e), true
	}
	return name, "", false
}

func parseLenient(rel string) (Spec, bool, error) {
	var s Spec
	if rel == "" || strings.HasPrefix(rel, "/") || strings.ContainsRune(rel, 0) || strings.Contains(rel, "\\") {
		return s, false, nil
	}
	dir, name := "", rel
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		dir, name = rel[:i], rel[i+1:]
	}
	for _, el := range strings.Split(dir, "/") {
		if el == ".." || el == "." || (el == "" && dir != "") {
			return s, false, nil
		}
	}
	stem, ext, hasExt := splitExt(name)
	if !hasExt {
		return s, false, nil
	}
	life := reLifePrefix.FindString(dir + "/")
	switch {
	case dir+"/" == life+"map/":
		s.Kind, s.Life = MapView, life
		return s, true, parseMap(&s, rel, stem, ext)
	case reEpisodeDir.MatchString(dir) && (stem == "sheet" || strings.HasPrefix(stem, "sheet@")):
		s.Kind, s.Life, s.Base = SheetView, life, dir
		return s, true, parseSheet(&s, rel, stem, ext)
	case reFrameDir.MatchString(dir) && strings.Contains(stem, "@"):
		s.Kind = FrameView
		return s, true, parseFrame(&s, rel, dir, stem, ext)
	}
	return s, false, nil
}

func imageFormat(s *Spec, rel, ext string) error {
	switch ext {
	case ".png":
		s.Format = PNG
	case ".jpg", ".jpeg":
		s.Format = JPEG
	default:
		return fmt.Errorf("view %q: this view is an image: name it .png or .jpg", rel)
	}
	return nil
}

// atoi parses a decimal integer within [lo, hi].
func atoi(s string, lo, hi int) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, false
	}
	return n, true
}

// ints parses n comma-separated integers within [lo, hi].
func ints(s string, n, lo, hi int) ([]int, bool) {
	parts := strings.Split(s, ",")
	if len(parts) != n {
		return nil, false
	}
	out := make([]int, n)
	for i, p := range parts {
		v, ok := atoi(p, lo, hi)
		if !ok {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}

// span parses A..B (lo <= A <= B <= hi).
func span(s string, lo, hi int) (int, int, bool) {
	a, b, ok := strings.Cut(s, "..")
	if !ok {
		return 0, 0, false
	}
	x, ok1 := atoi(a, lo, hi)
	y, ok2 := atoi(b, lo, hi)
	if !ok1 || !ok2 || x > y {
		return 0, 0, false
	}
	return x, y, true
}

const frameOpsHelp = "crop=X,Y,W,H  zoom=N[,smooth]  grid[=N]  thennow[=QUESTION], in this order"

func parseFrame(s *Spec, rel, dir, stem, ext string) error {
	if err := imageFormat(s, rel, ext); err != nil {
		return err
	}
	parts := strings.Split(stem, "@")
	if parts[0] == "" {
		return fmt.Errorf("view %q: no frame name before the first @", rel)
	}
	s.Base = dir + "/" + parts[0] + ".png"
	seen := map[string]bool{}
	for i, p := range parts[1:] {
		key, val, hasVal := strings.Cut(p, "=")
		if seen[key] {
			return fmt.Errorf("view %q: %s given twice", rel, key)
		}
		seen[key] = true
		op := &s.Frame
		switch key {
		case "crop":
			v, ok := ints(val, 4, 0, maxCoord)
			if !ok || v[2] == 0 || v[3] == 0 {
				return fmt.Errorf("view %q: %q: want crop=X,Y,W,H (frame pixels, W and H at least 1)", rel, p)
			}
			op.Crop = image.Rect(v[0], v[1], v[0]+v[2], v[1]+v[3])
		case "zoom":
			n, mode, _ := strings.Cut(val, ",")
			z, ok := atoi(n, 1, maxZoomArg)
			if !ok || (mode != "" && mode != "smooth" && mode != "nearest") {
				return fmt.Errorf("view %q: %q: want zoom=N or zoom=N,smooth (N a whole factor from 2 to %d)", rel, p, maxZoomArg)
			}
			if z == 1 {
				return fmt.Errorf("view %q: zoom=1 changes nothing: leave it out", rel)
			}
			op.Zoom, op.Smooth = z, mode == "smooth"
		case "grid":
			op.Grid = -1
			if hasVal {
				g, ok := atoi(val, 2, 4096)
				if !ok {
					return fmt.Errorf("view %q: %q: want grid or grid=N (a line every N frame pixels, 2 to 4096)", rel, p)
				}
				op.Grid = g
			}
		case "thennow":
			if i != len(parts)-2 {
				return fmt.Errorf("view %q: thennow must be the last operation (%s)", rel, frameOpsHelp)
			}
			op.ThenNow = true
			if hasVal {
				if val == "" {
					return fmt.Errorf("view %q: thennow= with no question: write thennow or thennow=QUESTION", rel)
				}
				op.Question = val
			}
		default:
			return fmt.Errorf("view %q: unknown operation %q; frame views take %s", rel, p, frameOpsHelp)
		}
	}
	return nil
}

func parseSheet(s *Spec, rel, stem, ext string) error {
	if err := imageFormat(s, rel, ext); err != nil {
		return err
	}
	const help = "episodes/ep_N/sheet[@steps=A..B][@cols=N][@tile=W].png"
	parts := strings.Split(stem, "@")
	seen := map[string]bool{}
	for _, p := range parts[1:] {
		key, val, _ := strings.Cut(p, "=")
		if seen[key] {
			return fmt.Errorf("view %q: %s given twice", rel, key)
		}
		seen[key] = true
		switch key {
		case "steps":
			a, b, ok := span(val, 0, 1<<30)
			if !ok {
				return fmt.Errorf("view %q: %q: want steps=A..B (A <= B)", rel, p)
			}
			s.Sheet.Steps, s.Sheet.From, s.Sheet.To = true, int64(a), int64(b)
		case "cols":
			c, ok := atoi(val, 1, 64)
			if !ok {
				return fmt.Errorf("view %q: %q: want cols=N (1 to 64)", rel, p)
			}
			s.Sheet.Cols = c
		case "tile":
			w, ok := atoi(val, 32, 1024)
			if !ok {
				return fmt.Errorf("view %q: %q: want tile=W (tile width, 32 to 1024 pixels)", rel, p)
			}
			if w == DefaultTileW {
				return fmt.Errorf("view %q: tile=%d is the default: leave it out", rel, w)
			}
			s.Sheet.TileW = w
		default:
			return fmt.Errorf("view %q: unknown option %q; a contact sheet is %s", rel, p, help)
		}
	}
	return nil
}

func parseMap(s *Spec, rel, stem, ext string) error {
	const help = "map/here|at=X,Z[@r=N][@y=A..B][@cell=PX].png|.jpg|.txt"
	if ext == ".txt" {
		s.Map.Text = true
	} else if err := imageFormat(s, rel, ext); err != nil {
		return err
	}
	parts := strings.Split(stem, "@")
	m := &s.Map
	switch key, val, _ := strings.Cut(parts[0], "="); key {
	case "here":
		if val != "" || strings.Contains(parts[0], "=") {
			return fmt.Errorf("view %q: %q: here takes no value; a map is %s", rel, parts[0], help)
		}
		m.Here = true
	case "at":
		v, ok := ints(val, 2, -maxCoord*32, maxCoord*32)
		if !ok {
			return fmt.Errorf("view %q: %q: want at=X,Z (block coordinates)", rel, parts[0])
		}
		m.X, m.Z = v[0], v[1]
	default:
		return fmt.Errorf("view %q: a map is %s", rel, help)
	}
	seen := map[string]bool{}
	for _, p := range parts[1:] {
		key, val, _ := strings.Cut(p, "=")
		if seen[key] {
			return fmt.Errorf("view %q: %s given twice", rel, key)
		}
		seen[key] = true
		switch key {
		case "r":
			r, ok := atoi(val, 1, 4096)
			if !ok {
				return fmt.Errorf("view %q: %q: want r=N (radius in blocks)", rel, p)
			}
			if r == DefaultMapRadius {
				return fmt.Errorf("view %q: r=%d is the default: leave it out", rel, r)
			}
			m.R = r
		case "y":
			a, b, ok := span(val, -maxCoord, maxCoord)
			if !ok {
				return fmt.Errorf("view %q: %q: want y=A..B (A <= B)", rel, p)
			}
			m.YBand, m.YMin, m.YMax = true, a, b
		case "cell":
			c, ok := atoi(val, 1, 64)
			if !ok {
				return fmt.Errorf("view %q: %q: want cell=PX (pixels per block, 1 to 64)", rel, p)
			}
			if c == DefaultMapCell {
				return fmt.Errorf("view %q: cell=%d is the default: leave it out", rel, c)
			}
			m.Cell = c
		default:
			return fmt.Errorf("view %q: unknown option %q; a map is %s", rel, p, help)
		}
	}
	if m.Text && m.Cell != 0 {
		return fmt.Errorf("view %q: cell= sizes image maps; a .txt map has one character per block", rel)
	}
	return nil
}

// Canonical is the one spelling of the view s.
func (s Spec) Canonical() string {
	var b strings.Builder
	ext := ".png"
	if s.Format == JPEG {
		ext = ".jpg"
	}
	switch s.Kind {
	case FrameView:
		b.WriteString(strings.TrimSuffix(s.Base, ".png"))
		o := s.Frame
		if !o.Crop.Empty() {
			fmt.Fprintf(&b, "@crop=%d,%d,%d,%d", o.Crop.Min.X, o.Crop.Min.Y, o.Crop.Dx(), o.Crop.Dy())
		}
		if o.Zoom > 1 {
			fmt.Fprintf(&b, "@zoom=%d", o.Zoom)
			if o.Smooth {
				b.WriteString(",smooth")
			}
		}
		if o.Grid == -1 {
			b.WriteString("@grid")
		} else if o.Grid > 0 {
			fmt.Fprintf(&b, "@grid=%d", o.Grid)
		}
		if o.ThenNow {
			b.WriteString("@thennow")
			if o.Question != "" {
				b.WriteString("=" + o.Question)
			}
		}
	case SheetView:
		b.WriteString(s.Base + "/sheet")
		o := s.Sheet
		if o.Steps {
			fmt.Fprintf(&b, "@steps=%d..%d", o.From, o.To)
		}
		if o.Cols > 0 {
			fmt.Fprintf(&b, "@cols=%d", o.Cols)
		}
		if o.TileW > 0 {
			fmt.Fprintf(&b, "@tile=%d", o.TileW)
		}
	case MapView:
		b.WriteString(s.Life + "map/")
		m := s.Map
		if m.Here {
			b.WriteString("here")
		} else {
			fmt.Fprintf(&b, "at=%d,%d", m.X, m.Z)
		}
		if m.R > 0 {
			fmt.Fprintf(&b, "@r=%d", m.R)
		}
		if m.YBand {
			fmt.Fprintf(&b, "@y=%d..%d", m.YMin, m.YMax)
		}
		if m.Cell > 0 {
			fmt.Fprintf(&b, "@cell=%d", m.Cell)
		}
		if m.Text {
			ext = ".txt"
		}
	}
	b.WriteString(ext)
	return b.String()
}
