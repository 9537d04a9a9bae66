package camera

import (
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // Load reads JPEG
	_ "image/png"  // and PNG
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Rect is a region of an image in pixels: X and Y are its top left corner,
// counted from the image's top left corner, W and H its size. The zero
// Rect means the whole image.
type Rect struct{ X, Y, W, H int }

func (r Rect) String() string {
	return fmt.Sprintf("%dx%d at (%d,%d)", r.W, r.H, r.X, r.Y)
}

// RGB is a colour with components from 0 to 1, as the image stores them
// (gamma-encoded sRGB for camera frames, not linear light).
type RGB struct{ R, G, B float64 }

// String is the colour as #rrggbb, each component rounded to 8 bits.
func (c RGB) String() string {
	b := func(v float64) int { return int(math.Round(math.Max(0, math.Min(1, v)) * 255)) }
	return fmt.Sprintf("#%02x%02x%02x", b(c.R), b(c.G), b(c.B))
}

// Luma is the colour's Rec. 601 luma, 0.299 R + 0.587 G + 0.114 B, from 0
// to 1: the weights of JPEG, of ffmpeg's default YUV conversion and of
// Go's color.GrayModel.
func (c RGB) Luma() float64 { return 0.299*c.R + 0.587*c.G + 0.114*c.B }

// Measurement is what Measure found in a region.
type Measurement struct {
	// Brightness is the mean Rec. 601 luma (see RGB.Luma) over the region,
	// from 0 (black) to 1 (white).
	Brightness float64
	// Mean is the mean colour over the region.
	Mean RGB
	// Pixels is the number of pixels measured.
	Pixels int
	// Region is the region measured; for the zero Rect, the whole image.
	Region Rect
}

// Load decodes the PNG or JPEG image in the file at path. Its errors are
// those of opening the file and of decoding it, naming the file.
func Load(path string) (image.Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	img, _, err := image.Decode(f)
	if errors.Is(err, image.ErrFormat) {
		return nil, fmt.Errorf("load %s: not a PNG or JPEG image", path)
	}
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	return img, nil
}

// Measure returns the mean colour and brightness of region r of img (the
// whole image for the zero Rect). Alpha is ignored: a translucent pixel
// counts as if over black. The error, an *Error of kind Invalid, says when
// r is empty or does not fit in the image, and gives the image's size.
func Measure(img image.Image, r Rect) (Measurement, error) {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if r == (Rect{}) {
		r = Rect{W: w, H: h}
	}
	if r.W <= 0 || r.H <= 0 {
		return Measurement{}, &Error{Kind: Invalid, Err: fmt.Errorf(
			"measure region %s of the %dx%d image: the region is empty: give it a width and height of at least 1 pixel", r, w, h)}
	}
	if r.X < 0 || r.Y < 0 || r.X+r.W > w || r.Y+r.H > h {
		return Measurement{}, &Error{Kind: Invalid, Err: fmt.Errorf(
			"measure region %s of the %dx%d image: the region spans x %d..%d, y %d..%d, outside the image's x 0..%d, y 0..%d",
			r, w, h, r.X, r.X+r.W-1, r.Y, r.Y+r.H-1, w-1, h-1)}
	}
	abs := image.Rect(b.Min.X+r.X, b.Min.Y+r.Y, b.Min.X+r.X+r.W, b.Min.Y+r.Y+r.H)
	var sr, sg, sb uint64 // 16-bit components summed
	if rgba, ok := img.(*image.RGBA); ok {
		// Camera PNGs decode to *image.RGBA; reading Pix directly
		// avoids a call and an allocation per pixel.
		for y := abs.Min.Y; y < abs.Max.Y; y++ {
			row := rgba.Pix[rgba.PixOffset(abs.Min.X, y):rgba.PixOffset(abs.Max.X, y)]
			for i := 0; i < len(row); i += 4 {
				sr += uint64(row[i]) * 0x101
				sg += uint64(row[i+1]) * 0x101
				sb += uint64(row[i+2]) * 0x101
			}
		}
	} else {
		for y := abs.Min.Y; y < abs.Max.Y; y++ {
			for x := abs.Min.X; x < abs.Max.X; x++ {
				cr, cg, cb, _ := img.At(x, y).RGBA()
				sr += uint64(cr)
				sg += uint64(cg)
				sb += uint64(cb)
			}
		}
	}
	px := r.W * r.H
	den := float64(px) * 0xffff
	mean := RGB{R: float64(sr) / den, G: float64(sg) / den, B: float64(sb) / den}
	return Measurement{Brightness: mean.Luma(), Mean: mean, Pixels: px, Region: r}, nil
}

// colorNames are the colours ParseColor knows by name. Green is full green
// as an LED shows it (CSS's "green" is half as bright); orange is CSS's.
var colorNames = map[string]RGB{
	"black":   {0, 0, 0},
	"white":   {1, 1, 1},
	"red":     {1, 0, 0},
	"green":   {0, 1, 0},
	"blue":    {0, 0, 1},
	"yellow":  {1, 1, 0},
	"cyan":    {0, 1, 1},
	"magenta": {1, 0, 1},
	"orange":  {1, 0xa5 / 255.0, 0},
}

// ParseColor reads a colour as "#rrggbb", "#rgb", "rrggbb" or "rgb" in hex,
// or as one of the names black, white, red, green (#00ff00), blue, yellow,
// cyan, magenta and orange (#ffa500), in any case. The error, an *Error of
// kind Invalid, lists the forms.
func ParseColor(s string) (RGB, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if c, ok := colorNames[t]; ok {
		return c, nil
	}
	hex := strings.TrimPrefix(t, "#")
	if len(hex) == 3 {
		hex = string([]byte{hex[0], hex[0], hex[1], hex[1], hex[2], hex[2]})
	}
	if len(hex) == 6 {
		if v, err := strconv.ParseUint(hex, 16, 32); err == nil {
			return RGB{
				R: float64(v>>16&0xff) / 255,
				G: float64(v>>8&0xff) / 255,
				B: float64(v&0xff) / 255,
			}, nil
		}
	}
	names := make([]string, 0, len(colorNames))
	for n := range colorNames {
		names = append(names, n)
	}
	sort.Strings(names)
	return RGB{}, &Error{Kind: Invalid, Err: fmt.Errorf(
		"colour %q: want #rrggbb, #rgb, rrggbb or rgb in hex (such as #ff0000) or one of %s", s, strings.Join(names, ", "))}
}

// Distance is how far apart two colours are, from 0 (the same) to 1 (black
// and white): the Euclidean distance between them in the RGB cube with
// sides of 1, divided by its diagonal, the square root of 3. Pure red and
// pure green are 0.816 apart; a colour that differs by 0.1 in every
// component is 0.1 away.
func Distance(a, b RGB) float64 {
	dr, dg, db := a.R-b.R, a.G-b.G, a.B-b.B
	return math.Sqrt((dr*dr + dg*dg + db*db) / 3)
}
