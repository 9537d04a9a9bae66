package openocd_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/hilrun/hilrun/pkg/elfsym"

	"github.com/hilrun/hilrun/pkg/gate/dial"
	"github.com/hilrun/hilrun/pkg/gate/environ"
	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/gate/process"
	"github.com/hilrun/hilrun/pkg/openocd"
)

// Start OpenOCD for an ST-Link probe, keep one session for the run, and
// read and write the firmware's variables by symbol.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, err := openocd.Launch(ctx, openocd.LaunchConfig{
		Configs:       []string{"interface/stlink.cfg", "target/stm32f4x.cfg"},
		AdapterSerial: "066DFF495150898367183639",
		// OpenOCD starts through hilrun's process gate, and is reached
		// through its dial gate: here as on the command line, any program
		// with the user's environment, any address.
		Procs: process.Permit(environ.Host()),
		Dial:  dial.Anywhere(),
	})
	if err != nil {
		log.Fatal(err) // quotes OpenOCD: "Error: open failed"
	}
	defer p.Stop()
	s, err := p.Dial(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	syms, err := elfsym.LoadSymbols(files.Anywhere(), "build/firmware.elf")
	if err != nil {
		log.Fatal(err)
	}
	sym, err := syms.Lookup("counter")
	if err != nil {
		log.Fatal(err) // symbol countr not found in build/firmware.elf (did you mean counter?)
	}
	v, err := s.ReadMemory(ctx, sym.Addr, 32, 1)
	var ce *openocd.CommandError
	switch {
	case errors.As(err, &ce):
		fmt.Println("the target refused:", ce.Output) // Failed to read memory at ...
	case errors.Is(err, openocd.ErrUnavailable):
		fmt.Println("the bench is broken:", err)
	case err == nil:
		fmt.Printf("counter = %d\n", v[0])
	}
}
