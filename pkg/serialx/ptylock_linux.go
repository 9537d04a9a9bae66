package serialx

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Major device numbers of pty slaves: the Unix98 ones (/dev/pts/N, handed
// out through /dev/ptmx) take 136 to 143, the legacy BSD ones (/dev/ttyp0)
// 3.
const (
	ptySlaveMajorFirst = 136
	ptySlaveMajorLast  = 143
	bsdPtySlaveMajor   = 3
)

// ptyDevice reports whether path (or the file a symlink at path names) is
// the slave side of a pseudo-terminal.
func ptyDevice(path string) bool {
	fi, err := os.Stat(path)
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	major := unix.Major(uint64(st.Rdev))
	return major >= ptySlaveMajorFirst && major <= ptySlaveMajorLast || major == bsdPtySlaveMajor
}

// flockHolder returns the PID of the process holding flock(2) on the file
// fi describes, from /proc/locks; 0 when unknown.
func flockHolder(fi os.FileInfo) int {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return 0
	}
	defer f.Close()
	// "1: FLOCK  ADVISORY  WRITE 4711 00:19:9 0 EOF": MAJOR:MINOR in hex
	// of the file system's device, then the inode. Waiters are listed
	// with "->" before the kind.
	want := strconv.FormatUint(uint64(unix.Major(uint64(st.Dev))), 16) + ":" +
		strconv.FormatUint(uint64(unix.Minor(uint64(st.Dev))), 16) + ":" +
		strconv.FormatUint(st.Ino, 10)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] != "FLOCK" {
			continue
		}
		if !sameDevIno(fields[5], want) {
			continue
		}
		if pid, err := strconv.Atoi(fields[4]); err == nil && pid > 0 {
			return pid
		}
	}
	return 0
}

// sameDevIno compares /proc/locks' MAJOR:MINOR:INODE fields with want,
// ignoring the zero padding the kernel gives the hex numbers.
func sameDevIno(field, want string) bool {
	parts := strings.Split(field, ":")
	if len(parts) != 3 {
		return false
	}
	for i := range 2 {
		n, err := strconv.ParseUint(parts[i], 16, 32)
		if err != nil {
			return false
		}
		parts[i] = strconv.FormatUint(n, 16)
	}
	return strings.Join(parts, ":") == want
}
