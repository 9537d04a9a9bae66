package qemu_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/hilrun/hilrun/pkg/gate/environ"
	"github.com/hilrun/hilrun/pkg/gate/process"
	"github.com/hilrun/hilrun/pkg/qemu"
)

// Start QEMU with hilrun's firmware (make -C firmware/qemu), then open the
// console like any serial port and point a GDB remote probe at GDBAddr.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	in, err := qemu.Start(ctx, qemu.Spec{
		Machine: "mps2-an385",
		Kernel:  "firmware/qemu/build/qemu.elf",
		LogFile: "qemu.log",
		// Programs start through hilrun's process gate: here as on the
		// command line, any program with the user's environment.
		Procs: process.Permit(environ.Host()),
	})
	if err != nil {
		log.Fatal(err) // "start qemu: qemu-system-arm is not installed (Debian: apt-get install qemu-system-arm): ..."
	}
	// Close after any outcome: QEMU and its process group end.
	defer in.Close(context.Background())
	fmt.Println("console", in.ConsolePath()) // /dev/pts/N
	fmt.Println("gdb", in.GDBAddr())         // /tmp/hilrun-qemu-N/gdb, a Unix socket
}
