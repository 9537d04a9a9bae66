package build

import (
	"debug/elf"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Sizes is how much memory a firmware image takes, in bytes.
//
// Text, Data and BSS follow the Berkeley format of GNU size: Text is code
// and read-only data, Data is initialised read-write data, BSS is zeroed
// or uninitialised RAM (the stack reserve too, when the linker script
// allocates one). FlashBytes is Text+Data (the load image of .data sits in
// flash) and RAMBytes is Data+BSS, unless PlatformIO printed its own
// figures, which then take precedence because its percentages refer to
// them. FlashTotal and RAMTotal are the board's capacities and are 0 when
// unknown; the percentages are meaningful only when the totals are known.
type Sizes struct {
	Text         uint64  `json:"text"`
	Data         uint64  `json:"data"`
	BSS          uint64  `json:"bss"`
	FlashBytes   uint64  `json:"flash_bytes"`
	RAMBytes     uint64  `json:"ram_bytes"`
	FlashTotal   uint64  `json:"flash_total,omitempty"`
	RAMTotal     uint64  `json:"ram_total,omitempty"`
	FlashPercent float64 `json:"flash_percent,omitempty"`
	RAMPercent   float64 `json:"ram_percent,omitempty"`
	// ELF is the image the sizes were read from, "" when they come from
	// the output alone.
	ELF string `json:"elf,omitempty"`
	// fromPIO records that FlashBytes and RAMBytes are PlatformIO's.
	fromPIO bool
}

// ELFSizes reads the section sizes of the ELF file at path and sums them
// the way GNU size's Berkeley format does: allocated sections only;
// executable or read-only ones count as text, writable ones with contents
// as data, writable ones without contents (NOBITS) as bss.
func ELFSizes(path string) (Sizes, error) {
	f, err := elf.Open(path)
	if err != nil {
		return Sizes{}, fmt.Errorf("read sizes of %s: %w", path, err)
	}
	defer f.Close()
	s := Sizes{ELF: path}
	for _, sec := range f.Sections {
		if sec.Flags&elf.SHF_ALLOC == 0 {
			continue
		}
		switch {
		case sec.Flags&elf.SHF_EXECINSTR != 0 || sec.Flags&elf.SHF_WRITE == 0:
			s.Text += sec.Size
		case sec.Type != elf.SHT_NOBITS:
			s.Data += sec.Size
		default:
			s.BSS += sec.Size
		}
	}
	s.FlashBytes, s.RAMBytes = s.Text+s.Data, s.Data+s.BSS
	return s, nil
}

// WithELF returns s with the section sizes of e, an image's sizes from
// ELFSizes. PlatformIO's Flash and RAM figures and the totals in s are
// kept; without them e's figures are taken.
func (s Sizes) WithELF(e Sizes) Sizes {
	out := s
	out.Text, out.Data, out.BSS, out.ELF = e.Text, e.Data, e.BSS, e.ELF
	if !s.fromPIO {
		out.FlashBytes, out.RAMBytes = e.FlashBytes, e.RAMBytes
	}
	return out
}

var (
	// pioUsage is PlatformIO's memory summary:
	// "RAM:   [=         ]   6.5% (used 21312 bytes from 327680 bytes)".
	pioUsage = regexp.MustCompile(`^(RAM|Flash):\s*\[[^\]]*\]\s*(-?[0-9.]+)%\s*\(used (\d+) bytes from (\d+) bytes\)`)
	// berkeleyHeader and berkeleyRow are GNU size's default output.
	berkeleyHeader = regexp.MustCompile(`^\s*text\s+data\s+bss\s+dec\s+hex\s+filename\s*$`)
	berkeleyRow    = regexp.MustCompile(`^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+([0-9a-fA-F]+)\s+(.*?)\s*$`)
)

// sizeScanner picks sizes out of output a line at a time: PlatformIO's RAM
// and Flash summary and GNU size's Berkeley table. When several images are
// reported the last one counts.
type sizeScanner struct {
	s          Sizes
	found      bool
	nextIsSize bool
}

func (z *sizeScanner) feed(line string) {
	line = strings.TrimRight(line, "\r")
	if z.nextIsSize {
		z.nextIsSize = false
		if m := berkeleyRow.FindStringSubmatch(line); m != nil {
			z.s.Text, _ = strconv.ParseUint(m[1], 10, 64)
			z.s.Data, _ = strconv.ParseUint(m[2], 10, 64)
			z.s.BSS, _ = strconv.ParseUint(m[3], 10, 64)
			if !z.s.fromPIO {
				z.s.FlashBytes, z.s.RAMBytes = z.s.Text+z.s.Data, z.s.Data+z.s.BSS
			}
			z.found = true
			return
		}
	}
	if berkeleyHeader.MatchString(line) {
		z.nextIsSize = true
		return
	}
	m := pioUsage.FindStringSubmatch(line)
	if m == nil {
		return
	}
	pct, _ := strconv.ParseFloat(m[2], 64)
	used, _ := strconv.ParseUint(m[3], 10, 64)
	total, _ := strconv.ParseUint(m[4], 10, 64)
	if total == 0 {
		pct = 0
	}
	if m[1] == "RAM" {
		z.s.RAMBytes, z.s.RAMTotal, z.s.RAMPercent = used, total, pct
	} else {
		z.s.FlashBytes, z.s.FlashTotal, z.s.FlashPercent = used, total, pct
	}
	z.s.fromPIO, z.found = true, true
}

// ParseSizes finds memory use in a build's output: PlatformIO's
// "RAM:"/"Flash:" summary lines (bytes, totals and percentages) and GNU
// size's Berkeley table (text, data, bss). ok is false when the output
// holds neither.
func ParseSizes(output string) (s Sizes, ok bool) {
	var z sizeScanner
	for line := range strings.Lines(output) {
		z.feed(strings.TrimSuffix(line, "\n"))
	}
	return z.s, z.found
}
