package sim

import (
	"image"
	"image/color"
	"math"
	"strconv"
	"sync"
)

// CameraSize is the size in pixels of every frame the board's camera takes:
// 320x240.
var CameraSize = image.Pt(320, 240)

// CameraLEDRegion is the bounding box of the LED in every frame: x 224, y 112,
// 32x32 pixels, so a sequence checks it with `region: [224, 112, 32, 32]`.
// Only pixels inside it change when the LED turns on or off. It lies on
// 16-pixel boundaries, JPEG's colour block size, so compression does not
// smear the LED into its surroundings or the surroundings into the region.
//
// With the LED lit the region's mean brightness (Rec. 601 luma over 255) is
// about 0.77 and its mean colour green, about #7bf97b; dark, the brightness
// is about 0.19. JPEG compression at quality 50 or better moves both by less
// than 0.01.
var CameraLEDRegion = image.Rect(224, 112, 256, 144)

// Colours of the picture. The lit LED is saturated green at its rim and
// burnt out to near white at its core, as a camera sees a bright LED; the
// corners of its bounding box catch its glow.
var (
	colTable   = color.RGBA{0x22, 0x20, 0x1e, 0xff}
	colPCB     = color.RGBA{0x0c, 0x46, 0x20, 0xff}
	colTrace   = color.RGBA{0x17, 0x6b, 0x33, 0xff}
	colPad     = color.RGBA{0xc8, 0xa0, 0x48, 0xff}
	colHole    = color.RGBA{0x10, 0x10, 0x10, 0xff}
	colChip    = color.RGBA{0x1a, 0x1a, 0x1c, 0xff}
	colPin     = color.RGBA{0xb4, 0xb4, 0xb8, 0xff}
	colMark    = color.RGBA{0x3a, 0x3a, 0x3e, 0xff}
	colSilk    = color.RGBA{0xe8, 0xe8, 0xe0, 0xff}
	colStamp   = color.RGBA{0xf0, 0xf0, 0xf0, 0xff}
	colLEDOff  = color.RGBA{0x30, 0x30, 0x30, 0xff}
	colLEDRim  = color.RGBA{0x30, 0xff, 0x30, 0xff}
	colLEDCore = color.RGBA{0xf0, 0xff, 0xf0, 0xff}
)

// stampOrigin is where the frame stamp's first digit starts, in the strip of
// table below the board; stampScale is the size in pixels of one dot of the
// 3x5 digit font.
var stampOrigin = image.Pt(10, 222)

const stampScale = 2

// RenderFrame draws the board as its camera sees it: a green board on a dark
// table, a chip wired to the LED, and the LED, lit or dark, filling
// CameraLEDRegion. stamp is printed in decimal at the bottom left, outside
// the board, so successive frames can differ; everything else depends only
// on ledOn. The image is CameraSize and new on each call.
func RenderFrame(ledOn bool, stamp uint32) *image.RGBA {
	img := image.NewRGBA(image.Rectangle{Max: CameraSize})
	copy(img.Pix, background().Pix)
	drawLED(img, ledOn)
	drawNumber(img, stampOrigin, strconv.FormatUint(uint64(stamp), 10))
	return img
}

// Frame renders what the board's camera sees now: the LED as Board.LED
// reports it at this moment (blinking included), stamped with the firmware's
// millisecond counter.
func (b *Board) Frame() *image.RGBA {
	on := b.mem.LED()
	ms, _ := b.mem.Read(CounterAddr, 32) // mapped and aligned: cannot fault
	return RenderFrame(on, ms)
}

// background returns the picture without the LED and the stamp, drawn once.
// Callers copy it and must not modify it.
var background = sync.OnceValue(func() *image.RGBA {
	img := image.NewRGBA(image.Rectangle{Max: CameraSize})
	fill(img, img.Rect, colTable)
	board := image.Rect(8, 8, 312, 212)
	fill(img, board, colPCB)

	// Mounting holes in the corners: a pad ring around a drilled hole.
	for _, c := range []image.Point{{20, 20}, {300, 20}, {20, 200}, {300, 200}} {
		disc(img, c, 7, colPad)
		disc(img, c, 4, colHole)
	}

	// Traces from the chip's right-hand pins to the LED and a resistor.
	led := CameraLEDRegion
	ledMid := (led.Min.Y + led.Max.Y) / 2
	fill(img, image.Rect(160, ledMid-1, 186, ledMid+2), colTrace)
	fill(img, image.Rect(206, ledMid-1, led.Min.X-4, ledMid+2), colTrace)
	fill(img, image.Rect(160, 107, 274, 110), colTrace)
	fill(img, image.Rect(271, 107, 274, ledMid+2), colTrace)
	fill(img, image.Rect(led.Max.X+4, ledMid-1, 274, ledMid+2), colTrace)

	// The series resistor: two pads and a body.
	fill(img, image.Rect(184, ledMid-4, 190, ledMid+5), colPad)
	fill(img, image.Rect(202, ledMid-4, 208, ledMid+5), colPad)
	fill(img, image.Rect(190, ledMid-3, 202, ledMid+4), colChip)

	// The LED's pads peek out on either side of its body, and a silkscreen
	// frame surrounds it, both outside CameraLEDRegion.
	fill(img, image.Rect(led.Min.X-4, ledMid-4, led.Min.X, ledMid+5), colPad)
	fill(img, image.Rect(led.Max.X, ledMid-4, led.Max.X+4, ledMid+5), colPad)
	outline(img, led.Inset(-7), colSilk)

	// The microcontroller: a QFP with pins on all four sides.
	chip := image.Rect(64, 68, 152, 156)
	for i := 0; i < 8; i++ {
		o := 8 + 10*i
		fill(img, image.Rect(chip.Min.X+o, chip.Min.Y-8, chip.Min.X+o+4, chip.Min.Y), colPin)
		fill(img, image.Rect(chip.Min.X+o, chip.Max.Y, chip.Min.X+o+4, chip.Max.Y+8), colPin)
		fill(img, image.Rect(chip.Min.X-8, chip.Min.Y+o, chip.Min.X, chip.Min.Y+o+4), colPin)
		fill(img, image.Rect(chip.Max.X, chip.Min.Y+o, chip.Max.X+8, chip.Min.Y+o+4), colPin)
	}
	fill(img, chip, colChip)
	disc(img, image.Pt(chip.Min.X+10, chip.Min.Y+10), 4, colMark)
	outline(img, chip.Inset(-12), colSilk)
	return img
})

// drawLED paints CameraLEDRegion: the LED as a disc filling it, with its
// glow (when lit) or the board (when dark) in the corners.
func drawLED(img *image.RGBA, on bool) {
	r := CameraLEDRegion
	cx := float64(r.Min.X+r.Max.X) / 2
	cy := float64(r.Min.Y+r.Max.Y) / 2
	radius := float64(r.Dx()) / 2
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			d := math.Hypot(float64(x)+0.5-cx, float64(y)+0.5-cy)
			// Coverage of the pixel by the disc, for a smooth edge.
			cover := math.Max(0, math.Min(1, radius-d+0.5))
			var c color.RGBA
			if on {
				// Burnt-out core fading to the saturated rim...
				t := math.Min(1, d/radius)
				body := mix(colLEDCore, colLEDRim, t*t)
				// ...and outside the disc a glow fading over a few pixels.
				glow := mix(colLEDRim, colPCB, math.Min(1, (d-radius)/16))
				c = mix(glow, body, cover)
			} else {
				c = mix(colPCB, colLEDOff, cover)
			}
			img.SetRGBA(x, y, c)
		}
	}
}

// mix returns a + (b-a)*t per channel, t in [0, 1].
func mix(a, b color.RGBA, t float64) color.RGBA {
	t = math.Max(0, math.Min(1, t))
	ch := func(a, b uint8) uint8 {
		return uint8(math.Round(float64(a) + (float64(b)-float64(a))*t))
	}
	return color.RGBA{ch(a.R, b.R), ch(a.G, b.G), ch(a.B, b.B), 0xff}
}

func fill(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	r = r.Intersect(img.Rect)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			img.SetRGBA(x, y, c)
		}
	}
}

// outline draws a one-pixel frame just inside r.
func outline(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	fill(img, image.Rect(r.Min.X, r.Min.Y, r.Max.X, r.Min.Y+1), c)
	fill(img, image.Rect(r.Min.X, r.Max.Y-1, r.Max.X, r.Max.Y), c)
	fill(img, image.Rect(r.Min.X, r.Min.Y, r.Min.X+1, r.Max.Y), c)
	fill(img, image.Rect(r.Max.X-1, r.Min.Y, r.Max.X, r.Max.Y), c)
}

// disc fills the pixels whose centres lie within radius of c.
func disc(img *image.RGBA, c image.Point, radius int, col color.RGBA) {
	for y := c.Y - radius; y <= c.Y+radius; y++ {
		for x := c.X - radius; x <= c.X+radius; x++ {
			dx, dy := x-c.X, y-c.Y
			if dx*dx+dy*dy <= radius*radius && (image.Point{x, y}).In(img.Rect) {
				img.SetRGBA(x, y, col)
			}
		}
	}
}

// digitFont holds the digits 0-9 as five rows of three dots, the top row
// first and the leftmost dot in bit 2.
var digitFont = [10][5]uint8{
	{7, 5, 5, 5, 7}, {2, 6, 2, 2, 7}, {7, 1, 7, 4, 7}, {7, 1, 7, 1, 7}, {5, 5, 7, 1, 1},
	{7, 4, 7, 1, 7}, {7, 4, 7, 5, 7}, {7, 1, 1, 1, 1}, {7, 5, 7, 5, 7}, {7, 5, 7, 1, 7},
}

// drawNumber prints the decimal digits s with its top-left corner at p.
func drawNumber(img *image.RGBA, p image.Point, s string) {
	for i, ch := range s {
		glyph := digitFont[ch-'0']
		x0 := p.X + i*4*stampScale
		for row, bits := range glyph {
			for col := 0; col < 3; col++ {
				if bits&(4>>col) == 0 {
					continue
				}
				x := x0 + col*stampScale
				y := p.Y + row*stampScale
				fill(img, image.Rect(x, y, x+stampScale, y+stampScale), colStamp)
			}
		}
	}
}
