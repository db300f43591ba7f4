package view

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"image/png"
	"io"
	"io/fs"
	"os"
	"sync"

	_ "image/gif" // frames may be any of the standard formats

	"github.com/mfm-project/mfm/internal/filestamp"
	"github.com/mfm-project/mfm/internal/lru"
)

// Format is an output image format, chosen by the view's extension.
type Format int

// Output formats.
const (
	PNG Format = iota
	JPEG
)

// FormatFor returns the format for a file name's extension: .png, .jpg or
// .jpeg (any case).
func FormatFor(name string) (Format, error) {
	ext := extOf(name)
	switch asciiLower(ext) {
	case ".png":
		return PNG, nil
	case ".jpg", ".jpeg":
		return JPEG, nil
	}
	return PNG, fmt.Errorf("output %q: want a .png, .jpg or .jpeg name", name)
}

func extOf(name string) string {
	for i := len(name) - 1; i >= 0 && name[i] != '/'; i-- {
		if name[i] == '.' {
			return name[i:]
		}
	}
	return ""
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

var pngEnc = png.Encoder{CompressionLevel: png.BestSpeed, BufferPool: &pngPool{}}

type pngPool struct{ p sync.Pool }

func (p *pngPool) Get() *png.EncoderBuffer {
	b, _ := p.p.Get().(*png.EncoderBuffer)
	return b
}
func (p *pngPool) Put(b *png.EncoderBuffer) { p.p.Put(b) }

// Encode writes img in format f.
func Encode(img image.Image, f Format) ([]byte, error) {
	var b bytes.Buffer
	var err error
	if f == JPEG {
		err = jpeg.Encode(&b, img, &jpeg.Options{Quality: 90})
	} else {
		err = pngEnc.Encode(&b, img)
	}
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	return b.Bytes(), nil
}

// ErrNoFrame is returned (wrapped) when a frame file does not exist.
var ErrNoFrame = errors.New("no such frame")

// opener opens a frame file by name: store-relative through an os.Root,
// or a plain path.
type opener func(name string) (*os.File, error)

// frames decodes and caches frames under the limits.
type frames struct {
	lim   *Limits
	open  opener
	cache *lru.Cache[*image.NRGBA]
}

func newFrames(lim *Limits, open opener) *frames {
	return &frames{lim: lim, open: open, cache: lru.New(lim.FrameCacheBytes, func(m *image.NRGBA) int64 { return int64(len(m.Pix)) + 64 })}
}

// stat returns the stamp of the regular file name.
func (fr *frames) stat(name string) (filestamp.Stamp, error) {
	f, err := fr.open(name)
	if err != nil {
		return filestamp.Stamp{}, openErr(name, err)
	}
	defer f.Close()
	return regular(name, f)
}

func regular(name string, f *os.File) (filestamp.Stamp, error) {
	st, err := f.Stat()
	if err != nil {
		return filestamp.Stamp{}, fmt.Errorf("frame %s: %w", name, err)
	}
	if !st.Mode().IsRegular() {
		return filestamp.Stamp{}, fmt.Errorf("frame %s: not a regular file", name)
	}
	return filestamp.Of(st), nil
}

func openErr(name string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("frame %s: %w", name, ErrNoFrame)
	}
	return fmt.Errorf("frame %s: %w", name, err)
}

// load returns the decoded frame name (shared: callers must not modify it)
// and its stamp.
func (fr *frames) load(name string) (*image.NRGBA, filestamp.Stamp, error) {
	f, err := fr.open(name)
	if err != nil {
		return nil, filestamp.Stamp{}, openErr(name, err)
	}
	defer f.Close()
	st, err := regular(name, f)
	if err != nil {
		return nil, st, err
	}
	key := name + "\x00" + st.String()
	if m, ok := fr.cache.Get(key); ok {
		return m, st, nil
	}
	m, err := decodeCapped(name, f, st.Size, fr.lim)
	if err != nil {
		return nil, st, err
	}
	fr.cache.Put(key, m)
	return m, st, nil
}

// decodeCapped checks the file size and the image header against the
// limits, then decodes into NRGBA.
func decodeCapped(name string, r io.ReadSeeker, size int64, lim *Limits) (*image.NRGBA, error) {
	if size > lim.MaxSourceBytes {
		return nil, fmt.Errorf("frame %s: %d bytes, more than the %d allowed", name, size, lim.MaxSourceBytes)
	}
	br := bufio.NewReaderSize(r, 32<<10)
	cfg, _, err := image.DecodeConfig(br)
	if err != nil {
		return nil, fmt.Errorf("frame %s: not a readable image: %w", name, err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width > lim.MaxSourceSide || cfg.Height > lim.MaxSourceSide ||
		cfg.Width*cfg.Height > lim.MaxSourcePixels {
		return nil, fmt.Errorf("frame %s: %dx%d is larger than allowed (%d per side, %d pixels)", name,
			cfg.Width, cfg.Height, lim.MaxSourceSide, lim.MaxSourcePixels)
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("frame %s: %w", name, err)
	}
	br.Reset(r)
	img, _, err := image.Decode(br)
	if err != nil {
		return nil, fmt.Errorf("frame %s: corrupt image: %w", name, err)
	}
	return toNRGBA(img), nil
}

func toNRGBA(img image.Image) *image.NRGBA {
	if m, ok := img.(*image.NRGBA); ok && m.Rect.Min == (image.Point{}) {
		return m
	}
	b := img.Bounds()
	m := image.NewNRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	if p, ok := img.(*image.Paletted); ok && len(p.Palette) > 0 { // most frames: image/draw has no fast path to NRGBA
		var lut [256][4]uint8
		for i := range lut {
			c := color.NRGBAModel.Convert(p.Palette[min(i, len(p.Palette)-1)]).(color.NRGBA)
			lut[i] = [4]uint8{c.R, c.G, c.B, c.A}
		}
		for y := 0; y < b.Dy(); y++ {
			src := p.Pix[p.PixOffset(b.Min.X, b.Min.Y+y):][:b.Dx()]
			dst := m.Pix[y*m.Stride:][:4*b.Dx()]
			for x, ci := range src {
				copy(dst[4*x:4*x+4], lut[ci][:])
			}
		}
		return m
	}
	draw.Draw(m, m.Rect, img, b.Min, draw.Src)
	return m
}

// LoadFile decodes the image file at path (a plain path, not confined to a
// store) under the source limits.
func LoadFile(path string, lim *Limits) (*image.NRGBA, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, openErr(path, err)
	}
	defer f.Close()
	st, err := regular(path, f)
	if err != nil {
		return nil, err
	}
	return decodeCapped(path, f, st.Size, lim)
}
