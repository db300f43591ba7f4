package main

import (
	"fmt"
	"image"
	"io"
	"os"
	"strconv"

	"github.com/mfm-project/mfm/view"
)

func init() {
	register(&command{
		name:    "zoom",
		summary: "the paper's tools/zoom.py: magnify a region of a frame 4x",
		usage: "[--factor N] [--smooth] FRAME X Y W H [OUT]\n\n" +
			"Crops the region at X,Y (top-left, frame pixels) of width W and height H from the\n" +
			"image FRAME, magnifies it 4x with nearest-neighbour (pixel edges stay sharp) and\n" +
			"writes OUT (default zoom.png in the current directory; .jpg for JPEG). A region that\n" +
			"reaches past the frame's edge is cut at the edge. Prints what it wrote.",
		run: runZoom,
	})
}

func runZoom(args []string, stdout, stderr io.Writer) int {
	c := commands["zoom"]
	fs := newFlagSet(c, stdout, stderr)
	factor := fs.Int("factor", 4, "whole magnification factor")
	smooth := fs.Bool("smooth", false, "smooth (Lanczos) instead of nearest-neighbour")
	if code, done := parseFlags(fs, args, stdout); done {
		return code
	}
	a := fs.Args()
	if len(a) != 5 && len(a) != 6 {
		fmt.Fprintln(stderr, "mfmd zoom: want FRAME X Y W H [OUT]")
		fs.Usage()
		return 2
	}
	var n [4]int
	for i := range n {
		v, err := strconv.Atoi(a[i+1])
		if err != nil {
			// zoom.py takes ints; accept 12.0 as Python's int(float()) would not — say so.
			fmt.Fprintf(stderr, "mfmd zoom: %s %q is not a whole number of pixels\n", [4]string{"X", "Y", "W", "H"}[i], a[i+1])
			return 2
		}
		n[i] = v
	}
	out := "zoom.png"
	if len(a) == 6 {
		out = a[5]
	}
	format, err := view.FormatFor(out)
	if err != nil {
		return fail(stderr, c.name, err)
	}
	lim := view.DefaultLimits()
	src, err := view.LoadFile(a[0], &lim)
	if err != nil {
		return fail(stderr, c.name, err)
	}
	want := image.Rect(n[0], n[1], n[0]+n[2], n[1]+n[3])
	region := want.Intersect(src.Bounds())
	if n[2] <= 0 || n[3] <= 0 || region.Empty() {
		return fail(stderr, c.name, fmt.Errorf("region %d,%d %dx%d is outside the %dx%d frame %s",
			n[0], n[1], n[2], n[3], src.Bounds().Dx(), src.Bounds().Dy(), a[0]))
	}
	op := view.FrameOps{Crop: region, Zoom: *factor, Smooth: *smooth}
	if *factor == 1 {
		op.Zoom = 0
	}
	img, err := view.Apply(src, op, &lim)
	if err != nil {
		return fail(stderr, c.name, err)
	}
	data, err := view.Encode(img, format)
	if err != nil {
		return fail(stderr, c.name, err)
	}
	if err := os.WriteFile(out, data, 0o644); err != nil {
		return fail(stderr, c.name, err)
	}
	note := ""
	if region != want {
		note = fmt.Sprintf(" (cut at the frame's edge from %d,%d %dx%d)", n[0], n[1], n[2], n[3])
	}
	fmt.Fprintf(stdout, "wrote %s: %dx%d, region %d,%d %dx%d of %s at %dx%s\n", out, img.Bounds().Dx(), img.Bounds().Dy(),
		region.Min.X, region.Min.Y, region.Dx(), region.Dy(), a[0], *factor, note)
	return 0
}
