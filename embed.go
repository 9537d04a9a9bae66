// Package hilrun holds files that ship inside the hilrun binary.
package hilrun

import _ "embed"

// SequenceSchema is the JSON Schema (2020-12) of hilrun sequence files.
//
//go:embed schemas/sequence.schema.json
var SequenceSchema []byte

// BenchSchema is the JSON Schema (2020-12) of hilrun bench files.
//
//go:embed schemas/bench.schema.json
var BenchSchema []byte

// PoolSchema is the JSON Schema (2020-12) of hilrun pool files; its
// benches refer to BenchSchema's definitions (bench.schema.json beside it).
//
//go:embed schemas/pool.schema.json
var PoolSchema []byte

// QuarantineSchema is the JSON Schema (2020-12) of hilrun quarantine
// lists (hilrun run --quarantine FILE).
//
//go:embed schemas/quarantine.schema.json
var QuarantineSchema []byte

// SimELF is the virtual board's firmware image (firmware/sim/sim.elf): the
// symbols of hilrun repl --sim resolve in it.
//
//go:embed firmware/sim/sim.elf
var SimELF []byte
