package camera

import (
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// board is a 40x30 image, dark grey (0x20) but for a white 10x10 square,
// the lit LED, with its top left corner at (20,10).
func board() *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, 40, 30))
	for y := 0; y < 30; y++ {
		for x := 0; x < 40; x++ {
			c := color.RGBA{0x20, 0x20, 0x20, 0xff}
			if x >= 20 && x < 30 && y >= 10 && y < 20 {
				c = color.RGBA{0xff, 0xff, 0xff, 0xff}
			}
			img.SetRGBA(x, y, c)
		}
	}
	return img
}

// onlyImage hides an image's concrete type, so Measure takes its generic
// path.
type onlyImage struct{ image.Image }

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestMeasure(t *testing.T) {
	grey := float64(0x20) / 255
	tests := []struct {
		name       string
		img        image.Image
		r          Rect
		brightness float64
		mean       RGB
		pixels     int
		region     Rect
	}{
		{"LED", board(), Rect{20, 10, 10, 10}, 1, RGB{1, 1, 1}, 100, Rect{20, 10, 10, 10}},
		{"LED inside", board(), Rect{22, 12, 3, 3}, 1, RGB{1, 1, 1}, 9, Rect{22, 12, 3, 3}},
		{"background", board(), Rect{0, 0, 10, 30}, grey, RGB{grey, grey, grey}, 300, Rect{0, 0, 10, 30}},
		// Half of a 10x20 region is lit: the mean is halfway.
		{"half lit", board(), Rect{20, 0, 10, 20}, (1 + grey) / 2, RGB{(1 + grey) / 2, (1 + grey) / 2, (1 + grey) / 2}, 200, Rect{20, 0, 10, 20}},
		// The whole image: 100 white pixels and 1100 grey ones.
		{"whole", board(), Rect{}, (100 + 1100*grey) / 1200, RGB{(100 + 1100*grey) / 1200, (100 + 1100*grey) / 1200, (100 + 1100*grey) / 1200}, 1200, Rect{0, 0, 40, 30}},
		{"generic path", onlyImage{board()}, Rect{20, 10, 10, 10}, 1, RGB{1, 1, 1}, 100, Rect{20, 10, 10, 10}},
		// A sub-image's coordinates count from its own corner.
		{"sub-image", board().SubImage(image.Rect(15, 5, 35, 25)), Rect{5, 5, 10, 10}, 1, RGB{1, 1, 1}, 100, Rect{5, 5, 10, 10}},
		{"red", solid(color.RGBA{0xff, 0, 0, 0xff}), Rect{}, 0.299, RGB{1, 0, 0}, 64, Rect{0, 0, 8, 8}},
		{"green", solid(color.RGBA{0, 0xff, 0, 0xff}), Rect{}, 0.587, RGB{0, 1, 0}, 64, Rect{0, 0, 8, 8}},
		{"gray16", onlyImage{image.NewGray16(image.Rect(0, 0, 2, 2))}, Rect{}, 0, RGB{}, 4, Rect{0, 0, 2, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Measure(tt.img, tt.r)
			if err != nil {
				t.Fatal(err)
			}
			if !near(m.Brightness, tt.brightness) || !near(m.Mean.R, tt.mean.R) || !near(m.Mean.G, tt.mean.G) ||
				!near(m.Mean.B, tt.mean.B) || m.Pixels != tt.pixels || m.Region != tt.region {
				t.Errorf("Measure(%v) = %+v, want brightness %v, mean %+v, %d pixels, region %v",
					tt.r, m, tt.brightness, tt.mean, tt.pixels, tt.region)
			}
		})
	}
}

func solid(c color.RGBA) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, c.A
	}
	return img
}

// TestMeasurePaths checks that the *image.RGBA shortcut and the generic
// path agree on an image of varied pixels.
func TestMeasurePaths(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 17, 13))
	for i := range img.Pix {
		img.Pix[i] = byte(i * 37)
	}
	r := Rect{3, 2, 11, 9}
	fast, err := Measure(img, r)
	if err != nil {
		t.Fatal(err)
	}
	slow, err := Measure(onlyImage{img}, r)
	if err != nil {
		t.Fatal(err)
	}
	if fast != slow {
		t.Errorf("RGBA path %+v, generic path %+v", fast, slow)
	}
}

func TestMeasureRegionErrors(t *testing.T) {
	tests := []struct {
		name string
		r    Rect
		want string
	}{
		{"past the right", Rect{35, 0, 10, 10}, "measure region 10x10 at (35,0) of the 40x30 image: the region spans x 35..44, y 0..9, outside the image's x 0..39, y 0..29"},
		{"past the bottom", Rect{0, 25, 5, 6}, "region 5x6 at (0,25) of the 40x30 image: the region spans x 0..4, y 25..30, outside"},
		{"negative", Rect{-1, 0, 5, 5}, "of the 40x30 image: the region spans x -1..3"},
		{"no height", Rect{1, 1, 5, 0}, "measure region 5x0 at (1,1) of the 40x30 image: the region is empty"},
		{"negative width", Rect{1, 1, -5, 3}, "the region is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Measure(board(), tt.r)
			var ce *Error
			if !errors.As(err, &ce) || ce.Kind != Invalid {
				t.Fatalf("Measure(%v) error = %v, want an Invalid *Error", tt.r, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Measure(%v) error:\n %s\nwant it to contain\n %s", tt.r, err, tt.want)
			}
		})
	}
}

func TestParseColor(t *testing.T) {
	tests := []struct {
		in   string
		want RGB
	}{
		{"#ff0000", RGB{1, 0, 0}},
		{"#F00", RGB{1, 0, 0}},
		{"00ff00", RGB{0, 1, 0}},
		{"00f", RGB{0, 0, 1}},
		{"#336699", RGB{0x33 / 255.0, 0x66 / 255.0, 0x99 / 255.0}},
		{" Red ", RGB{1, 0, 0}},
		{"green", RGB{0, 1, 0}},
		{"blue", RGB{0, 0, 1}},
		{"white", RGB{1, 1, 1}},
		{"black", RGB{}},
		{"yellow", RGB{1, 1, 0}},
		{"cyan", RGB{0, 1, 1}},
		{"magenta", RGB{1, 0, 1}},
		{"orange", RGB{1, 0xa5 / 255.0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseColor(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("ParseColor(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
	for _, bad := range []string{"", "purple", "#ff00", "#gg0000", "#+f0000", "ff00000", "rgb(255,0,0)"} {
		_, err := ParseColor(bad)
		var ce *Error
		if !errors.As(err, &ce) || ce.Kind != Invalid {
			t.Errorf("ParseColor(%q) error = %v, want an Invalid *Error", bad, err)
			continue
		}
		want := "want #rrggbb, #rgb, rrggbb or rgb in hex (such as #ff0000) or one of black, blue, cyan, green, magenta, orange, red, white, yellow"
		if !strings.Contains(err.Error(), want) {
			t.Errorf("ParseColor(%q) error %q does not list the forms", bad, err)
		}
	}
}

func TestRGBString(t *testing.T) {
	for c, want := range map[RGB]string{{1, 0, 0}: "#ff0000", {0.2, 0.4, 0.6}: "#336699", {-1, 2, 0.5}: "#00ff80"} {
		if got := c.String(); got != want {
			t.Errorf("%+v.String() = %s, want %s", c, got, want)
		}
	}
}

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b RGB
		want float64
	}{
		{RGB{1, 0, 0}, RGB{1, 0, 0}, 0},
		{RGB{}, RGB{1, 1, 1}, 1},
		{RGB{1, 0, 0}, RGB{0, 1, 0}, math.Sqrt(2.0 / 3)},
		{RGB{0.5, 0.5, 0.5}, RGB{0.6, 0.6, 0.6}, 0.1},
		{RGB{1, 0, 0}, RGB{0, 0, 0}, 1 / math.Sqrt(3)},
	}
	for _, tt := range tests {
		if got := Distance(tt.a, tt.b); !near(got, tt.want) || !near(Distance(tt.b, tt.a), got) {
			t.Errorf("Distance(%+v, %+v) = %v, want %v both ways", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, enc func(f *os.File) error) string {
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := enc(f); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pngPath := write("b.png", func(f *os.File) error { return png.Encode(f, board()) })
	jpgPath := write("b.jpg", func(f *os.File) error { return jpeg.Encode(f, board(), &jpeg.Options{Quality: 95}) })
	txtPath := write("b.txt", func(f *os.File) error { _, err := f.WriteString("not an image"); return err })

	for _, p := range []string{pngPath, jpgPath} {
		img, err := Load(p)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Measure(img, Rect{22, 12, 6, 6})
		if err != nil {
			t.Fatal(err)
		}
		if m.Brightness < 0.97 {
			t.Errorf("%s: LED brightness %v, want about 1", p, m.Brightness)
		}
	}
	if _, err := Load(txtPath); err == nil || err.Error() != "load "+txtPath+": not a PNG or JPEG image" {
		t.Errorf("Load(text file) error = %v", err)
	}
	if _, err := Load(filepath.Join(dir, "missing.png")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load(missing) error = %v, want one wrapping os.ErrNotExist", err)
	}
}
