package imaging

import (
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMeasure(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 20, 10))
	for y := 2; y < 6; y++ {
		for x := 4; x < 8; x++ {
			img.Set(x, y, color.RGBA{255, 255, 255, 255})
		}
	}
	m, err := Measure(img, Rect{X: 4, Y: 2, W: 4, H: 4})
	if err != nil || math.Abs(m.Brightness-1) > 1e-9 || m.Pixels != 16 {
		t.Fatalf("lit square: %+v %v", m, err)
	}
	m, _ = Measure(img, Rect{X: 4, Y: 2, W: 8, H: 4}) // half white
	if math.Abs(m.Brightness-0.5) > 1e-9 || math.Abs(m.Mean.G-0.5) > 1e-9 {
		t.Fatalf("half lit: %+v", m)
	}
	m, _ = Measure(img, Rect{})
	if m.Region != (Rect{0, 0, 20, 10}) || math.Abs(m.Brightness-16.0/200) > 1e-9 {
		t.Fatalf("whole picture: %+v", m)
	}
	if _, err := Measure(img, Rect{X: 18, Y: 0, W: 4, H: 4}); err == nil || err.Error() != "region [18, 0, 4, 4] is not inside the 20x10 picture" {
		t.Fatalf("outside: %v", err)
	}
}

func TestColors(t *testing.T) {
	for in, want := range map[string]RGB{"#ff0000": {1, 0, 0}, "0f0": {0, 1, 0}, " Blue ": {0, 0, 1}, "#FFFFFF": {1, 1, 1}} {
		got, err := ParseColor(in)
		if err != nil || got != want {
			t.Errorf("ParseColor(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseColor("#12345"); err == nil || !strings.Contains(err.Error(), "is not a colour") {
		t.Errorf("bad colour: %v", err)
	}
	if d := Distance(RGB{0, 0, 0}, RGB{1, 1, 1}); math.Abs(d-1) > 1e-9 {
		t.Errorf("black-white distance %v", d)
	}
	if (RGB{0, 1, 0.5}).Hex() != "#00ff80" {
		t.Errorf("hex %s", RGB{0, 1, 0.5}.Hex())
	}
}

func TestCompare(t *testing.T) {
	for in, tc := range map[string]struct {
		yes, no float64
	}{">0.6": {0.61, 0.6}, "<= 0.2": {0.2, 0.21}, "0.5": {0.5, 0.49}, "<0.3": {0.29, 0.3}} {
		c, err := ParseCompare(in)
		if err != nil || !c.Holds(tc.yes) || c.Holds(tc.no) {
			t.Errorf("%q: %v %v", in, c, err)
		}
	}
	for _, bad := range []string{">x", "> ", "1.5", "-1"} {
		if _, err := ParseCompare(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// BenchmarkCheckFrame is what an expect_image check costs per frame: decode
// a 320x240 PNG (the virtual board's camera size) and measure a region.
func BenchmarkCheckFrame(b *testing.B) {
	img := image.NewRGBA(image.Rect(0, 0, 320, 240))
	for i := range img.Pix {
		img.Pix[i] = byte(i * 7)
	}
	path := filepath.Join(b.TempDir(), "frame.png")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	png.Encode(f, img)
	f.Close()
	for b.Loop() {
		im, err := Load(path)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Measure(im, Rect{X: 224, Y: 112, W: 32, H: 32}); err != nil {
			b.Fatal(err)
		}
	}
}
