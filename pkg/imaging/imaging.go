// Package imaging measures pictures for hilrun's image checks: the mean
// brightness and colour of a region, and colours written as text. It is
// pure computation; the camera package grabs the pictures.
package imaging

import (
	"errors"
	"fmt"
	"image"
	"math"
	"os"
	"strconv"
	"strings"

	// Decoders for Load.
	_ "image/jpeg"
	_ "image/png"
)

// Rect is a region of a picture in pixels: X, Y of its top-left corner, W
// wide and H high. The zero Rect stands for the whole picture.
type Rect struct{ X, Y, W, H int }

// IsZero reports whether r is the zero Rect (the whole picture).
func (r Rect) IsZero() bool { return r == Rect{} }

func (r Rect) String() string {
	if r.IsZero() {
		return "the whole picture"
	}
	return fmt.Sprintf("[%d, %d, %d, %d]", r.X, r.Y, r.W, r.H)
}

// RGB is a colour with each channel from 0 to 1.
type RGB struct{ R, G, B float64 }

// Hex renders c as #rrggbb.
func (c RGB) Hex() string {
	b := func(v float64) int { return int(math.Round(math.Max(0, math.Min(1, v)) * 255)) }
	return fmt.Sprintf("#%02x%02x%02x", b(c.R), b(c.G), b(c.B))
}

// Measurement is what Measure found in a region.
type Measurement struct {
	// Brightness is the mean luma from 0 (black) to 1 (white), with the
	// Rec. 601 weights 0.299 R + 0.587 G + 0.114 B.
	Brightness float64
	// Mean is the mean colour.
	Mean RGB
	// Pixels is how many pixels were measured.
	Pixels int
	// Region is the region measured, in picture coordinates.
	Region Rect
}

// Load decodes a PNG or JPEG file.
func Load(path string) (image.Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	img, _, err := image.Decode(f)
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", path, err)
	}
	return img, nil
}

// Measure returns the mean brightness and colour of r in img. r must lie
// inside the picture.
func Measure(img image.Image, r Rect) (Measurement, error) {
	b := img.Bounds()
	if r.IsZero() {
		r = Rect{X: 0, Y: 0, W: b.Dx(), H: b.Dy()}
	}
	if r.W <= 0 || r.H <= 0 {
		return Measurement{}, fmt.Errorf("region %s is empty: width and height must be above 0", r)
	}
	if r.X < 0 || r.Y < 0 || r.X+r.W > b.Dx() || r.Y+r.H > b.Dy() {
		return Measurement{}, fmt.Errorf("region %s is not inside the %dx%d picture", r, b.Dx(), b.Dy())
	}
	var sr, sg, sb float64
	for y := r.Y; y < r.Y+r.H; y++ {
		for x := r.X; x < r.X+r.W; x++ {
			cr, cg, cb, _ := img.At(b.Min.X+x, b.Min.Y+y).RGBA()
			sr += float64(cr)
			sg += float64(cg)
			sb += float64(cb)
		}
	}
	n := float64(r.W * r.H)
	mean := RGB{sr / n / 0xffff, sg / n / 0xffff, sb / n / 0xffff}
	return Measurement{
		Brightness: 0.299*mean.R + 0.587*mean.G + 0.114*mean.B,
		Mean:       mean,
		Pixels:     r.W * r.H,
		Region:     r,
	}, nil
}

var named = map[string]string{
	"black": "000000", "white": "ffffff", "red": "ff0000", "green": "00ff00", "blue": "0000ff",
	"yellow": "ffff00", "cyan": "00ffff", "magenta": "ff00ff", "orange": "ffa500",
}

// ColorNames lists the colour names ParseColor knows.
func ColorNames() []string {
	return []string{"black", "white", "red", "green", "blue", "yellow", "cyan", "magenta", "orange"}
}

// ParseColor reads "#ff0000", "#f00", "ff0000" or a name from ColorNames.
func ParseColor(s string) (RGB, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if hex, ok := named[t]; ok {
		t = hex
	}
	t = strings.TrimPrefix(t, "#")
	if len(t) == 3 {
		t = string([]byte{t[0], t[0], t[1], t[1], t[2], t[2]})
	}
	v, err := strconv.ParseUint(t, 16, 32)
	if len(t) != 6 || err != nil {
		return RGB{}, fmt.Errorf("%q is not a colour: write #rrggbb, #rgb or one of %s", s, strings.Join(ColorNames(), ", "))
	}
	return RGB{float64(v>>16) / 255, float64(v>>8&0xff) / 255, float64(v&0xff) / 255}, nil
}

// Distance is the Euclidean distance between a and b divided by √3, so it
// runs from 0 (the same colour) to 1 (black against white).
func Distance(a, b RGB) float64 {
	dr, dg, db := a.R-b.R, a.G-b.G, a.B-b.B
	return math.Sqrt(dr*dr+dg*dg+db*db) / math.Sqrt(3)
}

// Compare is a bound on a measured number: Op one of <, <=, >, >=, and
// Value.
type Compare struct {
	Op    string
	Value float64
}

// ParseCompare reads ">0.6", "<= 0.25" or a bare number (meaning >=).
func ParseCompare(s string) (Compare, error) {
	t := strings.TrimSpace(s)
	c := Compare{Op: ">="}
	for _, op := range []string{"<=", ">=", "<", ">"} {
		if strings.HasPrefix(t, op) {
			c.Op, t = op, strings.TrimSpace(t[len(op):])
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return Compare{}, fmt.Errorf("%q is not a bound: write a comparison such as \">0.6\" or \"<=0.2\"", s)
	}
	if v < 0 || v > 1 {
		return Compare{}, errors.New("brightness runs from 0 (black) to 1 (white): " + strconv.Quote(s) + " is outside it")
	}
	c.Value = v
	return c, nil
}

// Holds reports whether v satisfies c.
func (c Compare) Holds(v float64) bool {
	switch c.Op {
	case "<":
		return v < c.Value
	case "<=":
		return v <= c.Value
	case ">":
		return v > c.Value
	}
	return v >= c.Value
}

func (c Compare) String() string { return c.Op + strconv.FormatFloat(c.Value, 'g', -1, 64) }
