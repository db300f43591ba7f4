package view

import (
	"fmt"
	"image"
	"regexp"
	"slices"
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
	// NorthPlusZ (@north=+z) puts north at +z (Luanti), z growing
	// upwards; NorthMinusZ (@north=-z) at -z (Minecraft), z growing
	// downwards. With neither the store's declared axes decide
	// (episodes.Axes), else north is -z.
	NorthPlusZ  bool
	NorthMinusZ bool
	Text        bool // .txt: one character per cell
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
	// maxMapRadiusArg bounds r= in the grammar; Limits.MaxMapRadius is
	// the (smaller) radius a render accepts.
	maxMapRadiusArg = 4096
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

// option is one "@key" or "@key=value" of a view name. set stores the
// value in the Spec and reports whether it was well formed; a default value
// is stored as the zero value, so Canonical leaves it out and Parse answers
// with the one spelling.
type option struct {
	key  string
	want string // the accepted forms, shown when the value is malformed
	set  func(s *Spec, val string, hasVal bool) bool
	// explain, when set, says what is wrong with a value set refused
	// ("" when it cannot tell).
	explain func(val string) string
}

// The options of each kind of view, in their canonical order.
var (
	frameOptions = []option{
		{"crop", fmt.Sprintf("crop=X,Y,W,H (frame pixels, each a whole number from 0 to %d, W and H at least 1)", maxCoord), func(s *Spec, val string, _ bool) bool {
			v, ok := ints(val, 4, 0, maxCoord)
			if !ok || v[2] == 0 || v[3] == 0 {
				return false
			}
			s.Frame.Crop = image.Rect(v[0], v[1], v[0]+v[2], v[1]+v[3])
			return true
		}, explainCrop},
		{"zoom", fmt.Sprintf("zoom=N or zoom=N,smooth (N a whole factor from 2 to %d)", maxZoomArg), func(s *Spec, val string, _ bool) bool {
			n, mode, _ := strings.Cut(val, ",")
			z, ok := atoi(n, 1, maxZoomArg)
			if !ok || (mode != "" && mode != "smooth" && mode != "nearest") {
				return false
			}
			if z == 1 {
				z, mode = 0, ""
			}
			s.Frame.Zoom, s.Frame.Smooth = z, mode == "smooth"
			return true
		}, nil},
		{"grid", "grid or grid=N (a line every N frame pixels, 2 to 4096)", func(s *Spec, val string, hasVal bool) bool {
			if !hasVal {
				s.Frame.Grid = -1
				return true
			}
			g, ok := atoi(val, 2, 4096)
			s.Frame.Grid = g
			return ok
		}, nil},
		{"thennow", "thennow or thennow=QUESTION (the last operation)", func(s *Spec, val string, hasVal bool) bool {
			s.Frame.ThenNow, s.Frame.Question = true, val
			return !hasVal || val != ""
		}, nil},
	}
	sheetOptions = []option{
		{"steps", "steps=A..B (A <= B)", func(s *Spec, val string, _ bool) bool {
			a, b, ok := span(val, 0, 1<<30)
			s.Sheet.Steps, s.Sheet.From, s.Sheet.To = ok, int64(a), int64(b)
			return ok
		}, nil},
		{"cols", "cols=N (1 to 64)", func(s *Spec, val string, _ bool) bool {
			c, ok := atoi(val, 1, 64)
			s.Sheet.Cols = c
			return ok
		}, nil},
		{"tile", "tile=W (tile width, 32 to 1024 pixels)", func(s *Spec, val string, _ bool) bool {
			w, ok := atoi(val, 32, 1024)
			s.Sheet.TileW = defaultTo(w, DefaultTileW)
			return ok
		}, nil},
	}
	mapOptions = []option{
		{"r", fmt.Sprintf("r=N (radius in blocks, 1 to %d)", maxMapRadiusArg), func(s *Spec, val string, _ bool) bool {
			r, ok := atoi(val, 1, maxMapRadiusArg)
			s.Map.R = defaultTo(r, DefaultMapRadius)
			return ok
		}, nil},
		{"y", "y=A..B (keep cells with A <= y <= B)", func(s *Spec, val string, _ bool) bool {
			a, b, ok := span(val, -maxCoord, maxCoord)
			s.Map.YBand, s.Map.YMin, s.Map.YMax = ok, a, b
			return ok
		}, nil},
		{"cell", "cell=PX (pixels per block, 1 to 64)", func(s *Spec, val string, _ bool) bool {
			c, ok := atoi(val, 1, 64)
			s.Map.Cell = defaultTo(c, DefaultMapCell)
			return ok
		}, nil},
		{"north", "north=+z or north=-z (north is +z, as in Luanti, or -z, as in Minecraft; the default is the store's declared axes, else -z)", func(s *Spec, val string, _ bool) bool {
			s.Map.NorthPlusZ, s.Map.NorthMinusZ = val == "+z", val == "-z"
			return val == "+z" || val == "-z"
		}, nil},
	}
)

// explainCrop says which of crop's X,Y,W,H is wrong and how.
func explainCrop(val string) string {
	parts := strings.Split(val, ",")
	if len(parts) != 4 {
		return fmt.Sprintf("%d value(s), want 4", len(parts))
	}
	for i, p := range parts {
		name := [...]string{"X", "Y", "W", "H"}[i]
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return fmt.Sprintf("%s %q is not a whole number from 0", name, p)
		}
		if n, err := strconv.ParseUint(p, 10, 64); err != nil || n > maxCoord {
			return fmt.Sprintf("%s %s is more than %d, the largest a frame coordinate may be", name, p, maxCoord)
		}
		if i >= 2 && strings.Trim(p, "0") == "" {
			return fmt.Sprintf("%s is 0: W and H are at least 1", name)
		}
	}
	return ""
}

// defaultTo stores the default value d as 0.
func defaultTo(v, d int) int {
	if v == d {
		return 0
	}
	return v
}

// optionsHelp lists the options' keys in order, for messages.
func optionsHelp(opts []option) string {
	var b strings.Builder
	for i, o := range opts {
		if i > 0 {
			b.WriteString("  ")
		}
		b.WriteString(strings.SplitN(o.want, " (", 2)[0])
	}
	return b.String()
}

// parseOptions applies the "@"-separated parts of a view name to s: each
// must be a known option given at most once.
func parseOptions(s *Spec, rel string, parts []string, opts []option, what string) error {
	seen := make([]bool, len(opts))
	for _, p := range parts {
		key, val, hasVal := strings.Cut(p, "=")
		i := slices.IndexFunc(opts, func(o option) bool { return o.key == key })
		if i < 0 {
			return fmt.Errorf("view %q: unknown operation %q; %s takes %s, in this order", rel, p, what, optionsHelp(opts))
		}
		if seen[i] {
			return fmt.Errorf("view %q: %s given twice", rel, key)
		}
		seen[i] = true
		if !opts[i].set(s, val, hasVal) {
			if opts[i].explain != nil {
				if why := opts[i].explain(val); why != "" {
					return fmt.Errorf("view %q: %q: %s; want %s", rel, p, why, opts[i].want)
				}
			}
			return fmt.Errorf("view %q: %q: want %s", rel, p, opts[i].want)
		}
	}
	return nil
}

func parseFrame(s *Spec, rel, dir, stem, ext string) error {
	if err := imageFormat(s, rel, ext); err != nil {
		return err
	}
	parts := strings.Split(stem, "@")
	if parts[0] == "" {
		return fmt.Errorf("view %q: no frame name before the first @", rel)
	}
	s.Base = dir + "/" + parts[0] + ".png"
	return parseOptions(s, rel, parts[1:], frameOptions, "a frame view")
}

func parseSheet(s *Spec, rel, stem, ext string) error {
	if err := imageFormat(s, rel, ext); err != nil {
		return err
	}
	return parseOptions(s, rel, strings.Split(stem, "@")[1:], sheetOptions, "a contact sheet (episodes/ep_N/sheet[@...].png)")
}

// mapHelp is the shape of a map's name.
const mapHelp = "map/here|at=X,Z[@r=N][@y=A..B][@cell=PX][@north=+z|-z].png|.jpg|.txt"

func parseMap(s *Spec, rel, stem, ext string) error {
	if ext == ".txt" {
		s.Map.Text = true
	} else if err := imageFormat(s, rel, ext); err != nil {
		return err
	}
	parts := strings.Split(stem, "@")
	m := &s.Map
	switch key, val, hasVal := strings.Cut(parts[0], "="); key {
	case "here":
		if hasVal {
			return fmt.Errorf("view %q: %q: here takes no value; a map is %s", rel, parts[0], mapHelp)
		}
		m.Here = true
	case "at":
		v, ok := ints(val, 2, -maxCoord*32, maxCoord*32)
		if !ok {
			return fmt.Errorf("view %q: %q: want at=X,Z (block coordinates)", rel, parts[0])
		}
		m.X, m.Z = v[0], v[1]
	default:
		return fmt.Errorf("view %q: a map is %s", rel, mapHelp)
	}
	if err := parseOptions(s, rel, parts[1:], mapOptions, "a map"); err != nil {
		return err
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
		if m.NorthPlusZ {
			b.WriteString("@north=+z")
		}
		if m.NorthMinusZ {
			b.WriteString("@north=-z")
		}
		if m.Text {
			ext = ".txt"
		}
	}
	b.WriteString(ext)
	return b.String()
}
