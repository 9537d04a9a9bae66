package gdbremote_test

import (
	"context"
	"fmt"
	"time"

	"github.com/hilrun/hilrun/pkg/gate/dial"
	"github.com/hilrun/hilrun/pkg/gdbremote"
)

// Reading a word from a guest under QEMU started with
// -gdb tcp:127.0.0.1:1234: the guest keeps running, halted only for the
// access.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := gdbremote.Dial(ctx, "127.0.0.1:1234", gdbremote.Options{
		// Reached through hilrun's dial gate: here as on the command line,
		// any address.
		Dial: dial.Anywhere(),
	})
	if err != nil {
		fmt.Println(err) // gdb 127.0.0.1:1234: connect: ... connection refused
		return
	}
	defer s.Close() // detaches: a guest that ran runs on
	v, err := s.ReadMemory(ctx, 0x40000000, 32, 1)
	if err != nil {
		fmt.Println(err) // reading 4 bytes at 0x40000000: the target refused (E14)
		return
	}
	fmt.Printf("0x%08x, halted for the read: %v\n", v[0], s.LastAccessHalted())
}
