package qemu

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
)

const syscallNoctty = syscall.O_NOCTTY

// listening reports whether process pid has a TCP socket listening on port,
// from /proc: the kernel's table of IPv4 sockets gives the listening
// socket's inode, and pid's descriptors show whether it holds that socket,
// so a socket some other program bound to the port does not count.
func listening(pid, port int) bool {
	f, err := os.Open("/proc/net/tcp")
	if err != nil {
		return false
	}
	defer f.Close()
	want := strings.ToUpper(strconv.FormatInt(int64(port), 16))
	for len(want) < 4 {
		want = "0" + want
	}
	var inodes []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || fields[3] != "0A" { // 0A: LISTEN
			continue
		}
		if _, p, ok := strings.Cut(fields[1], ":"); ok && p == want {
			inodes = append(inodes, "socket:["+fields[9]+"]")
		}
	}
	if len(inodes) == 0 {
		return false
	}
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		link, err := os.Readlink(dir + "/" + e.Name())
		if err != nil {
			continue
		}
		for _, in := range inodes {
			if link == in {
				return true
			}
		}
	}
	return false
}
