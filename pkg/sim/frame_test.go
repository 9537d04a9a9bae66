package sim

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"testing"
)

// brightness returns the mean Rec. 601 luma of r in img, from 0 (black) to
// 1 (white): the measure an image check's `brightness` applies to a region.
func brightness(img image.Image, r image.Rectangle) float64 {
	var sum float64
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			sum += float64(color.GrayModel.Convert(img.At(x, y)).(color.Gray).Y) / 255
		}
	}
	return sum / float64(r.Dx()*r.Dy())
}

// meanColor returns the mean 8-bit red, green and blue of r in img.
func meanColor(img image.Image, r image.Rectangle) (red, green, blue float64) {
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			red += float64(c.R)
			green += float64(c.G)
			blue += float64(c.B)
		}
	}
	n := float64(r.Dx() * r.Dy())
	return red / n, green / n, blue / n
}

// Thresholds an image check of the LED must be able to use with margin.
const (
	litAbove  = 0.6
	darkBelow = 0.3
)

// checkLED fails unless the LED region of img is lit (or dark) by a clear
// margin, and lit means green.
func checkLED(t *testing.T, what string, img image.Image, wantOn bool) {
	t.Helper()
	if got := img.Bounds().Size(); got != CameraSize {
		t.Fatalf("%s: size %v, want %v", what, got, CameraSize)
	}
	br := brightness(img, CameraLEDRegion)
	switch {
	case wantOn && br <= litAbove:
		t.Errorf("%s: LED region brightness %.3f, want > %v (lit)", what, br, litAbove)
	case !wantOn && br >= darkBelow:
		t.Errorf("%s: LED region brightness %.3f, want < %v (dark)", what, br, darkBelow)
	}
	if wantOn {
		r, g, b := meanColor(img, CameraLEDRegion)
		if g < r+80 || g < b+80 {
			t.Errorf("%s: lit LED mean colour (%.0f, %.0f, %.0f) is not clearly green", what, r, g, b)
		}
	}
}

func jpegRoundTrip(t *testing.T, img image.Image, quality int) image.Image {
	t.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: quality}); err != nil {
		t.Fatal(err)
	}
	out, err := jpeg.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRenderFrameLED(t *testing.T) {
	if !CameraLEDRegion.In(image.Rectangle{Max: CameraSize}) {
		t.Fatalf("CameraLEDRegion %v is not inside the %v frame", CameraLEDRegion, CameraSize)
	}
	for _, on := range []bool{true, false} {
		name := map[bool]string{true: "lit", false: "dark"}[on]
		t.Run(name, func(t *testing.T) {
			img := RenderFrame(on, 42)
			checkLED(t, "rendered", img, on)
			for _, q := range []int{CameraJPEGQuality, 75, 50} {
				checkLED(t, fmt.Sprintf("jpeg quality %d", q), jpegRoundTrip(t, img, q), on)
			}
		})
	}
}

// TestRenderFrameChangesOnlyWhatItShows checks that the LED changes only its
// region and the stamp changes nothing in it, so an image check of the region
// sees the LED and nothing else.
func TestRenderFrameChangesOnlyWhatItShows(t *testing.T) {
	tests := []struct {
		name       string
		a, b       *image.RGBA
		mayDiffer  func(image.Point) bool
		mustDiffer bool
	}{
		{
			name:       "led",
			a:          RenderFrame(true, 7),
			b:          RenderFrame(false, 7),
			mayDiffer:  func(p image.Point) bool { return p.In(CameraLEDRegion) },
			mustDiffer: true,
		},
		{
			name:       "stamp",
			a:          RenderFrame(true, 0),
			b:          RenderFrame(true, 4294967295),
			mayDiffer:  func(p image.Point) bool { return !p.In(CameraLEDRegion) },
			mustDiffer: true,
		},
		{
			name:      "same state",
			a:         RenderFrame(false, 99),
			b:         RenderFrame(false, 99),
			mayDiffer: func(image.Point) bool { return false },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			differ := 0
			for y := 0; y < CameraSize.Y; y++ {
				for x := 0; x < CameraSize.X; x++ {
					if tt.a.RGBAAt(x, y) == tt.b.RGBAAt(x, y) {
						continue
					}
					differ++
					if !tt.mayDiffer(image.Pt(x, y)) {
						t.Fatalf("pixel (%d, %d) differs: %v vs %v", x, y, tt.a.RGBAAt(x, y), tt.b.RGBAAt(x, y))
					}
				}
			}
			if tt.mustDiffer && differ == 0 {
				t.Error("frames are identical, want them to differ")
			}
		})
	}
}

func TestBoardFrameFollowsMemory(t *testing.T) {
	b := New(Options{})
	defer b.Close()
	steps := []struct {
		name   string
		addr   uint32
		value  uint32
		wantOn bool
	}{
		{"power-on", 0, 0, false},
		{"odr set", GPIOODR, 1 << LEDPin, true},
		{"odr cleared", GPIOODR, 0, false},
		{"bsrr set", GPIOBSRR, 1 << LEDPin, true},
		{"bsrr reset", GPIOBSRR, 1 << (LEDPin + 16), false},
	}
	for _, s := range steps {
		if s.addr != 0 {
			if err := b.Memory().Write(s.addr, 32, s.value); err != nil {
				t.Fatal(err)
			}
		}
		checkLED(t, s.name, b.Frame(), s.wantOn)
	}
}
