package luanti

import (
	"fmt"
	"image"
	"strings"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
	"github.com/jezek/xgb/xtest"
)

// X is a connection to the game's X server: it finds and focuses the game
// window, sends real keyboard and mouse input through XTEST and captures
// the window's pixels with GetImage.
type X struct {
	conn   *xgb.Conn
	root   xproto.Window
	win    xproto.Window
	w, h   int
	keymap map[xproto.Keysym]xproto.Keycode
}

// DialX connects to display (":57") and loads the keyboard mapping.
func DialX(display string) (*X, error) {
	c, err := xgb.NewConnDisplay(display)
	if err != nil {
		return nil, fmt.Errorf("connect to X display %s: %w", display, err)
	}
	if err := xtest.Init(c); err != nil {
		c.Close()
		return nil, fmt.Errorf("X display %s: XTEST extension: %w", display, err)
	}
	setup := xproto.Setup(c)
	x := &X{conn: c, root: setup.DefaultScreen(c).Root, keymap: map[xproto.Keysym]xproto.Keycode{}}
	n := byte(setup.MaxKeycode - setup.MinKeycode + 1)
	km, err := xproto.GetKeyboardMapping(c, setup.MinKeycode, n).Reply()
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("X display %s: keyboard mapping: %w", display, err)
	}
	per := int(km.KeysymsPerKeycode)
	for i := 0; i < int(n); i++ {
		for j := 0; j < per; j++ {
			ks := km.Keysyms[i*per+j]
			if _, ok := x.keymap[ks]; !ok && ks != 0 {
				x.keymap[ks] = xproto.Keycode(int(setup.MinKeycode) + i)
			}
		}
	}
	return x, nil
}

// Close closes the connection.
func (x *X) Close() { x.conn.Close() }

// FindWindow looks for a mapped top-level window whose name contains
// title (the game's window is "Minetest 5.6.1 [...]") and focuses it.
func (x *X) FindWindow(title string) error {
	tree, err := xproto.QueryTree(x.conn, x.root).Reply()
	if err != nil {
		return fmt.Errorf("query X window tree: %w", err)
	}
	for _, w := range tree.Children {
		attr, err := xproto.GetWindowAttributes(x.conn, w).Reply()
		if err != nil || attr.MapState != xproto.MapStateViewable {
			continue
		}
		name, err := xproto.GetProperty(x.conn, false, w, xproto.AtomWmName, xproto.GetPropertyTypeAny, 0, 256).Reply()
		if err != nil || !strings.Contains(string(name.Value), title) {
			continue
		}
		geo, err := xproto.GetGeometry(x.conn, xproto.Drawable(w)).Reply()
		if err != nil {
			continue
		}
		x.win, x.w, x.h = w, int(geo.Width), int(geo.Height)
		return x.Focus()
	}
	return fmt.Errorf("no mapped window named %q yet", title)
}

// Focus gives the game window the input focus (Xvfb has no window
// manager; without focus key presses are ignored).
func (x *X) Focus() error {
	if err := xproto.SetInputFocusChecked(x.conn, xproto.InputFocusPointerRoot, x.win, xproto.TimeCurrentTime).Check(); err != nil {
		return fmt.Errorf("focus game window: %w", err)
	}
	return nil
}

// Size is the game window's size.
func (x *X) Size() (int, int) { return x.w, x.h }

// Keysyms the controller uses.
const (
	KeyW      xproto.Keysym = 'w'
	KeyA      xproto.Keysym = 'a'
	KeyS      xproto.Keysym = 's'
	KeyD      xproto.Keysym = 'd'
	KeySpace  xproto.Keysym = ' '
	KeyShift  xproto.Keysym = 0xffe1
	KeyI      xproto.Keysym = 'i'
	KeyEscape xproto.Keysym = 0xff1b
)

// Key presses (down) or releases a key given by keysym.
func (x *X) Key(ks xproto.Keysym, down bool) error {
	kc, ok := x.keymap[ks]
	if !ok {
		return fmt.Errorf("keysym %#x has no keycode", ks)
	}
	t := byte(xproto.KeyRelease)
	if down {
		t = xproto.KeyPress
	}
	return xtest.FakeInputChecked(x.conn, t, byte(kc), 0, x.root, 0, 0, 0).Check()
}

// Tap presses and releases a key.
func (x *X) Tap(ks xproto.Keysym) error {
	if err := x.Key(ks, true); err != nil {
		return err
	}
	time.Sleep(30 * time.Millisecond)
	return x.Key(ks, false)
}

// Button presses or releases mouse button b (1 dig, 3 place).
func (x *X) Button(b byte, down bool) error {
	t := byte(xproto.ButtonRelease)
	if down {
		t = xproto.ButtonPress
	}
	return xtest.FakeInputChecked(x.conn, t, b, 0, x.root, 0, 0, 0).Check()
}

// Move moves the pointer by dx, dy pixels (relative motion turns the view).
func (x *X) Move(dx, dy int) error {
	if dx == 0 && dy == 0 {
		return nil
	}
	return xtest.FakeInputChecked(x.conn, xproto.MotionNotify, 1, 0, x.root, int16(dx), int16(dy), 0).Check()
}

// Capture reads the game window's pixels (24-bit TrueColor, BGRX).
func (x *X) Capture() (*image.RGBA, error) {
	r, err := xproto.GetImage(x.conn, xproto.ImageFormatZPixmap, xproto.Drawable(x.win), 0, 0, uint16(x.w), uint16(x.h), 0xffffffff).Reply()
	if err != nil {
		return nil, fmt.Errorf("capture game window: %w", err)
	}
	img := image.NewRGBA(image.Rect(0, 0, x.w, x.h))
	if len(r.Data) < x.w*x.h*4 {
		return nil, fmt.Errorf("capture game window: %d bytes for %dx%d", len(r.Data), x.w, x.h)
	}
	for i := 0; i < x.w*x.h; i++ {
		img.Pix[i*4+0] = r.Data[i*4+2]
		img.Pix[i*4+1] = r.Data[i*4+1]
		img.Pix[i*4+2] = r.Data[i*4+0]
		img.Pix[i*4+3] = 255
	}
	return img, nil
}
