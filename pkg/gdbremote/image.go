package gdbremote

import (
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"time"
)

// maxImage bounds the image files LoadImage and VerifyImage read.
const maxImage = 64 << 20

// segment is a part of an image file and the address it loads at.
type segment struct {
	addr uint64
	data []byte
}

// LoadImage writes the image file at path into the target's memory,
// offset bytes above the addresses in the file: an ELF file's PT_LOAD
// segments (at their physical addresses; at their virtual ones when every
// physical address is 0 and there are several), or a raw binary (.bin, or
// anything not ELF) at offset. It writes RAM only: flash needs the stub's
// own flash support. It returns what it did, such as
// "loaded 1024 bytes in 2 segments in 0.012s".
func (s *Session) LoadImage(ctx context.Context, path string, offset uint64) (string, error) {
	segs, err := imageSegments(path)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	start := time.Now()
	total := 0
	err = s.stopped(ctx, "load "+path, func() error {
		for _, sg := range segs {
			what := fmt.Sprintf("load %s: writing %d bytes at 0x%x", path, len(sg.data), sg.addr+offset)
			if err := s.writeBytes(sg.addr+offset, sg.data, what); err != nil {
				return err
			}
			total += len(sg.data)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("loaded %d bytes in %d segments in %.3fs", total, len(segs), time.Since(start).Seconds()), nil
}

// maxDiffs is how many differing bytes a VerifyError lists.
const maxDiffs = 16

// VerifyImage checks, by reading it back, that the target's memory holds
// the image file at path, offset as for LoadImage. A mismatch is a
// *VerifyError.
func (s *Session) VerifyImage(ctx context.Context, path string, offset uint64) error {
	segs, err := imageSegments(path)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ve := &VerifyError{Path: path}
	err = s.stopped(ctx, "verify "+path, func() error {
		for _, sg := range segs {
			base := sg.addr + offset
			what := fmt.Sprintf("verify %s: reading %d bytes at 0x%x", path, len(sg.data), base)
			got, err := s.readBytes(base, len(sg.data), what)
			if err != nil {
				return err
			}
			for i, want := range sg.data {
				if got[i] == want {
					continue
				}
				if ve.N < maxDiffs {
					ve.Diffs = append(ve.Diffs, fmt.Sprintf("0x%08x: 0x%02x instead of 0x%02x", base+uint64(i), got[i], want))
				}
				ve.N++
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if ve.N > 0 {
		return ve
	}
	return nil
}

// imageSegments returns what an ELF file or a raw binary loads where.
func imageSegments(path string) ([]segment, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read image: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxImage+1))
	if err != nil {
		return nil, fmt.Errorf("read image %s: %w", path, err)
	}
	if len(data) > maxImage {
		return nil, fmt.Errorf("image %s: larger than %d MiB", path, maxImage>>20)
	}
	if !bytes.HasPrefix(data, []byte(elf.ELFMAG)) {
		if len(data) > 1 && (data[0] == ':' && isHex(data[1]) || data[0] == 'S' && '0' <= data[1] && data[1] <= '9') {
			return nil, fmt.Errorf("image %s: Intel hex and S-record files are not supported over GDB: convert it to ELF or .bin", path)
		}
		return []segment{{addr: 0, data: data}}, nil
	}
	ef, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", path, err)
	}
	toVaddr, nload := true, 0
	for _, p := range ef.Progs {
		if p.Type != elf.PT_LOAD || p.Filesz == 0 {
			continue
		}
		nload++
		if p.Paddr != 0 {
			toVaddr = false
		}
	}
	toVaddr = toVaddr && nload > 1
	var segs []segment
	for _, p := range ef.Progs {
		if p.Type != elf.PT_LOAD || p.Filesz == 0 {
			continue
		}
		if p.Filesz > maxImage {
			return nil, fmt.Errorf("image %s: segment of %d bytes is larger than the file", path, p.Filesz)
		}
		b, err := io.ReadAll(io.NewSectionReader(p, 0, int64(p.Filesz)))
		if err != nil {
			return nil, fmt.Errorf("image %s: %w", path, err)
		}
		addr := p.Paddr
		if toVaddr {
			addr = p.Vaddr
		}
		segs = append(segs, segment{addr: addr, data: b})
	}
	if len(segs) == 0 {
		return nil, fmt.Errorf("image %s: no loadable segments", path)
	}
	return segs, nil
}
