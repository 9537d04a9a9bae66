package openocd

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// LoadImage writes the image file at path (ELF, Intel hex, S-record or
// raw binary; a path OpenOCD resolves, relative to its working directory)
// into the target's memory with load_image, offset bytes above the
// addresses in the file (a raw binary's address). It returns what OpenOCD
// reported, such as "downloaded 1024 bytes in 0.020s (50.000 KiB/s)".
// Flash needs a flash driver and OpenOCD's program command instead.
func (s *Session) LoadImage(ctx context.Context, path string, offset uint64) (string, error) {
	r, err := s.Run(ctx, imageCommand("load_image", path, offset))
	return strings.TrimSpace(strings.Join(append(r.Log, r.Result), "\n")), err
}

// Program writes the image file at path into the target's flash with
// OpenOCD's program command, verifying it and resetting the target after
// when asked; offset is added to a raw binary's address. The path reaches
// OpenOCD as one quoted word, whatever characters it holds. It returns what
// OpenOCD printed.
func (s *Session) Program(ctx context.Context, path string, verify, reset bool, offset uint64) (string, error) {
	// OpenOCD's program procedure puts the name in braces and evaluates it
	// again (eval flash write_image erase {NAME}): a brace or a backslash
	// in the name would end the braces and run what follows as Tcl.
	if i := strings.IndexFunc(path, func(r rune) bool { return r == '{' || r == '}' || r == '\\' || r < 0x20 || r == 0x7f }); i >= 0 {
		return "", fmt.Errorf("program %s: OpenOCD's program command evaluates the file name as Tcl again, so it cannot take one with %q in it: rename the file", path, path[i:i+1])
	}
	cmd := "program " + tclWord(path)
	if verify {
		cmd += " verify"
	}
	if reset {
		cmd += " reset"
	}
	if offset != 0 {
		cmd += fmt.Sprintf(" 0x%x", offset)
	}
	r, err := s.Run(ctx, cmd)
	return strings.TrimSpace(strings.Join(append(r.Log, r.Result), "\n")), err
}

// VerifyImage checks that the target's memory holds the image file at
// path, offset as for LoadImage, with verify_image. A mismatch is a
// *CommandError listing the differences OpenOCD found.
//
// Targets that cannot checksum memory (OpenOCD's mem_ap targets, the
// virtual board's among them) make verify_image fail; for ELF files and
// raw binaries VerifyImage then compares the file with the memory itself,
// reading the file from hilrun's working directory.
func (s *Session) VerifyImage(ctx context.Context, path string, offset uint64) error {
	cmd := imageCommand("verify_image", path, offset)
	_, err := s.Run(ctx, cmd)
	var ce *CommandError
	if !errors.As(err, &ce) || !strings.Contains(ce.Output, "doesn't support checksum_memory") {
		return err
	}
	secs, ferr := imageSections(path)
	if ferr != nil {
		return err
	}
	return s.compareImage(ctx, cmd, secs, offset)
}

func imageCommand(name, path string, offset uint64) string {
	cmd := name + " " + tclWord(path)
	typ := imageTypes[strings.ToLower(filepath.Ext(path))]
	if offset != 0 || typ != "" {
		cmd += fmt.Sprintf(" 0x%x", offset)
	}
	if typ != "" {
		cmd += " " + typ
	}
	return cmd
}

// imageTypes names OpenOCD's image type for a file's extension. Without a
// type OpenOCD guesses from the file's first bytes, and fails on a file
// shorter than the header it reads (a raw binary of 8 bytes or less).
var imageTypes = map[string]string{
	".bin": "bin", ".elf": "elf", ".hex": "ihex", ".ihex": "ihex",
	".s19": "s19", ".srec": "s19", ".mot": "s19",
}

// maxDiffs is how many differing bytes a failed verification lists, as
// many as OpenOCD's verify_image does.
const maxDiffs = 128

// compareImage reads the memory the sections load into and lists the
// bytes that differ, the way verify_image does.
func (s *Session) compareImage(ctx context.Context, cmd string, secs []imageSection, offset uint64) error {
	var diffs []string
	for _, sec := range secs {
		base := sec.addr + offset
		got, err := s.ReadMemory(ctx, base, 8, len(sec.data))
		if err != nil {
			return err
		}
		for i, want := range sec.data {
			if got[i] == uint64(want) {
				continue
			}
			if len(diffs) == maxDiffs {
				diffs = append(diffs, "More than 128 errors, the rest are not printed.")
				break
			}
			diffs = append(diffs, fmt.Sprintf("diff %d address 0x%08x. Was 0x%02x instead of 0x%02x",
				len(diffs), base+uint64(i), got[i], want))
		}
		if len(diffs) > maxDiffs {
			break
		}
	}
	if len(diffs) == 0 {
		return nil
	}
	out := append([]string{"the target cannot checksum memory: hilrun compared the image with what it read"}, diffs...)
	if len(diffs) <= maxDiffs {
		out = append(out, "No more differences found.")
	}
	return &CommandError{Cmd: cmd, Output: strings.Join(out, "\n"), Code: -4}
}

// imageSection is a part of an image file and where it loads.
type imageSection struct {
	addr uint64
	data []byte
}

// imageSections returns what an ELF file or a raw binary loads where, as
// OpenOCD's load_image sees it: an ELF file's PT_LOAD segments with
// contents in the file, at their physical addresses (at their virtual ones
// when every physical address is 0 and there are several); a raw binary at
// address 0. Intel hex and S-record files are not supported.
func imageSections(path string) ([]imageSection, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	switch {
	case bytes.HasPrefix(data, []byte(elf.ELFMAG)):
	case len(data) > 1 && data[0] == ':' && isHex(data[1]),
		len(data) > 1 && data[0] == 'S' && data[1] >= '0' && data[1] <= '9':
		return nil, fmt.Errorf("%s: comparing Intel hex and S-record images is not supported", path)
	default:
		return []imageSection{{addr: 0, data: data}}, nil
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	toVaddr := true
	nload := 0
	for _, p := range f.Progs {
		if p.Paddr != 0 {
			toVaddr = false
			break
		}
		if p.Type == elf.PT_LOAD && p.Memsz != 0 {
			nload++
		}
	}
	toVaddr = toVaddr && nload > 1
	var secs []imageSection
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD || p.Filesz == 0 {
			continue
		}
		b, err := io.ReadAll(io.NewSectionReader(p, 0, int64(p.Filesz)))
		if err != nil {
			return nil, err
		}
		addr := p.Paddr
		if toVaddr {
			addr = p.Vaddr
		}
		secs = append(secs, imageSection{addr: addr, data: b})
	}
	return secs, nil
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
