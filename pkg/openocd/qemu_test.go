package openocd

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/testenv"
)

// uBoot is U-Boot for QEMU's virt machine, from Debian's u-boot-qemu.
const uBoot = "/usr/lib/u-boot/qemu_arm/u-boot.bin"

// qemuGuest is QEMU running U-Boot with its GDB stub and a QMP monitor,
// which tells whether the guest runs.
type qemuGuest struct {
	gdb string // HOST:PORT of the GDB stub
	qmp *bufio.ReadWriter
}

// startQEMU starts QEMU's virt machine running U-Boot, with its GDB stub
// on a free port; QEMU is killed when the test ends.
func startQEMU(t *testing.T) *qemuGuest {
	t.Helper()
	bin := testenv.NeedTool(t, "qemu-system-arm", "apt-get install qemu-system-arm")
	if _, err := os.Stat(uBoot); err != nil {
		testenv.Missing(t, "%s is missing (apt-get install u-boot-qemu): %v", uBoot, err)
	}
	ports, err := freePorts(2)
	must(t, err)
	g := &qemuGuest{gdb: "127.0.0.1:" + strconv.Itoa(ports[0])}
	qmpAddr := "127.0.0.1:" + strconv.Itoa(ports[1])
	var out testenv.Buffer
	cmd := exec.Command(bin, "-M", "virt", "-bios", uBoot, "-nographic",
		"-gdb", "tcp:"+g.gdb, "-qmp", "tcp:"+qmpAddr+",server=on,wait=off")
	cmd.Stdout, cmd.Stderr = &out, &out
	must(t, cmd.Start())
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	// QMP answers once QEMU has set up its devices, the GDB stub's
	// socket among them. (Connecting to the stub to see whether it
	// listens would stop the guest.)
	deadline := time.Now().Add(20 * time.Second)
	var c net.Conn
	for {
		c, err = net.DialTimeout("tcp", qmpAddr, time.Second)
		if err == nil {
			break
		}
		select {
		case <-exited:
			t.Fatalf("qemu exited: %s", out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("qemu's QMP monitor did not answer: %v; qemu said %s", err, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(20 * time.Second))
	g.qmp = bufio.NewReadWriter(bufio.NewReader(c), bufio.NewWriter(c))
	g.call(t, "qmp_capabilities")
	return g
}

// call runs a QMP command and returns its "return" value, skipping
// events.
func (g *qemuGuest) call(t *testing.T, cmd string) json.RawMessage {
	t.Helper()
	fmt.Fprintf(g.qmp, `{"execute": %q}`+"\n", cmd)
	must(t, g.qmp.Flush())
	for {
		line, err := g.qmp.ReadBytes('\n')
		if err != nil {
			t.Fatalf("qmp %s: %v", cmd, err)
		}
		var m struct {
			Return json.RawMessage `json:"return"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("qmp %s: %v in %q", cmd, err, line)
		}
		if m.Error != nil {
			t.Fatalf("qmp %s: %s", cmd, m.Error)
		}
		if m.Return != nil {
			return m.Return
		}
	}
}

// status returns the guest's run state: "running", "paused", ...
func (g *qemuGuest) status(t *testing.T) string {
	t.Helper()
	var s struct{ Status string }
	must(t, json.Unmarshal(g.call(t, "query-status"), &s))
	return s.Status
}

// TestQEMUGDBStub points each transport at QEMU's GDB stub, which stops
// the guest when a debugger connects: the dial fails at once saying to
// use gdb:, and the guest runs again afterwards.
func TestQEMUGDBStub(t *testing.T) {
	t.Parallel()
	g := startQEMU(t)
	if st := g.status(t); st != "running" {
		t.Fatalf("the guest is %s before any dial, want running", st)
	}
	for _, tr := range transports {
		t.Run(tr.String(), func(t *testing.T) {
			addr := JoinAddr(g.gdb, tr)
			var err error
			// The context has no deadline: the dial must end by itself.
			within(t, 10*time.Second, "dial", func() { _, err = Dial(context.Background(), addr, anyAddr) })
			want := fmt.Sprintf("openocd at %s: %s speaks the GDB remote protocol, not OpenOCD's: use gdb: %s", addr, g.gdb, g.gdb)
			if !errors.Is(err, ErrWrongServer) || err.Error() != want {
				t.Fatalf("got %v, want ErrWrongServer saying\n%q", err, want)
			}
			if st := g.status(t); st != "running" {
				t.Errorf("the guest is %s after the dial, want running", st)
			}
		})
	}
}
