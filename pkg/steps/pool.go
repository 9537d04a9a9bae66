package steps

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/hilrun/hilrun/pkg/gate/files"
)

// A pool file lists the benches of one host that run sequences in
// parallel (hilrun run --pool FILE -j N): identical boards, each a bench
// of its own.
//
//	benches:
//	  - name: left
//	    bench: boards/left.bench.yaml   # a bench file, relative to the pool file
//	  - name: right                     # or inline, as in a bench file
//	    devices: {console: /dev/ttyACM1}
//	  - name: sim1
//	    sim: true                       # a virtual board, started by hilrun
//	    health: [{send: echo alive, expect: alive}]
//	    recover: [{reset: run}]         # its ladder (recover.go)
type Pool struct {
	File    string
	Benches []*PoolBench
}

// PoolBench is one bench of a pool: a bench file or an inline bench, or a
// virtual board (Sim), which has no Bench.
type PoolBench struct {
	Name  string
	Bench *Bench
	Sim   bool
	// Ladder is the bench's health check and recovery ladder: its bench
	// file's, its inline one's, or a virtual board's own; nil for none.
	Ladder *Ladder
	Pos    Pos
}

// MaxPoolBenches bounds the benches of one pool file.
const MaxPoolBenches = 256

var (
	poolKeys      = []string{"benches", "$schema"}
	poolBenchKeys = []string{"name", "bench", "sim", "devices", "probes", "cameras", "power", "secrets", "health", "recover"}
	poolNameRE    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
)

// LoadPool reads a pool file and the bench files it names. Problems come
// back as an ErrorList with FILE:LINE:COL.
func LoadPool(fs files.Policy, path string) (*Pool, error) {
	data, err := ReadFile(fs, path)
	if err != nil {
		return nil, err
	}
	root, err := parseNode(path, data)
	if err != nil {
		return nil, err
	}
	e := &errs{file: path}
	d := &decoder{errs: e, file: path, seq: &Sequence{}, ids: map[string]Pos{}}
	pool := &Pool{File: path}
	if root.Kind != yaml.MappingNode {
		d.add(d.pos(root), "a pool file must be a mapping with benches:, found %s", kindName(root))
		return nil, e.err()
	}
	var list *yaml.Node
	for _, p := range d.pairs(root) {
		switch p.key.Value {
		case "benches":
			list = p.val
		case "$schema":
		default:
			d.unknownKey(p.key, "the pool file", poolKeys)
		}
	}
	switch {
	case list == nil:
		d.add(d.pos(root), "a pool file lists its benches under benches:")
	case list.Kind != yaml.SequenceNode || len(list.Content) == 0:
		d.add(d.pos(list), "benches must be a list of benches, each {name: NAME, bench: FILE} or an inline bench, found %s", kindName(list))
	case len(list.Content) > MaxPoolBenches:
		d.add(d.pos(list), "a pool has at most %d benches, found %d", MaxPoolBenches, len(list.Content))
	default:
		seen := map[string]Pos{}
		for _, n := range list.Content {
			if pb := d.poolBench(fs, resolve(n), path, seen); pb != nil {
				pool.Benches = append(pool.Benches, pb)
			}
		}
	}
	if err := e.err(); err != nil {
		return nil, err
	}
	return pool, nil
}

// poolBench decodes one entry of a pool's benches; seen holds the names
// so far.
func (d *decoder) poolBench(fs files.Policy, n *yaml.Node, poolPath string, seen map[string]Pos) *PoolBench {
	if n.Kind != yaml.MappingNode {
		d.add(d.pos(n), "a bench of the pool must be a mapping such as {name: left, bench: left.bench.yaml}, found %s", kindName(n))
		return nil
	}
	pb := &PoolBench{Pos: d.pos(n)}
	pairs := d.pairs(n)
	var file *yaml.Node
	inline := false
	for _, p := range pairs {
		switch p.key.Value {
		case "name":
			pb.Name, _ = d.str(p.val, "name")
			if pb.Name != "" && !poolNameRE.MatchString(pb.Name) {
				d.add(d.pos(p.val), "bench name %q: want letters, digits, '.', '_' and '-', at most 64, starting with a letter or digit", pb.Name)
			}
			if first, dup := seen[pb.Name]; dup && pb.Name != "" {
				d.add(d.pos(p.val), "bench name %q is given twice (first at line %d)", pb.Name, first.Line)
			}
			seen[pb.Name] = d.pos(p.val)
		case "bench":
			file = p.val
		case "sim":
			pb.Sim, _ = d.boolean(p.val, "sim")
		case "devices", "probes", "cameras", "power", "secrets":
			inline = true
		}
	}
	if pb.Name == "" {
		d.add(pb.Pos, "a bench of the pool needs a name:")
	}
	kinds := 0
	for _, k := range []bool{file != nil, inline, pb.Sim} {
		if k {
			kinds++
		}
	}
	switch {
	case kinds > 1:
		d.add(pb.Pos, "bench %s: give one of bench: FILE, an inline bench (devices:, probes:, cameras:, power:, secrets:) or sim: true", pb.Name)
		return nil
	case file != nil:
		for _, p := range pairs {
			switch {
			case slices.Contains(ladderKeys, p.key.Value):
				d.add(d.pos(p.key), "bench %s: %s: goes in the bench file %s, beside its devices", pb.Name, p.key.Value, file.Value)
			case !slices.Contains([]string{"name", "bench", "sim"}, p.key.Value):
				d.unknownKey(p.key, "a bench of the pool", poolBenchKeys)
			}
		}
		f, ok := d.str(file, "bench")
		if !ok {
			return nil
		}
		if !filepath.IsAbs(f) {
			f = filepath.Join(filepath.Dir(poolPath), f)
		}
		b, err := LoadBench(fs, f)
		if err != nil {
			if el, ok := err.(ErrorList); ok {
				d.errs.list = append(d.errs.list, el...)
			} else {
				d.add(d.pos(file), "bench %s: %v", pb.Name, err)
			}
			return nil
		}
		pb.Bench, pb.Ladder = b, b.Ladder
	case pb.Sim:
		for _, p := range pairs {
			if !slices.Contains([]string{"name", "sim", "health", "recover"}, p.key.Value) {
				d.unknownKey(p.key, "a bench of the pool", poolBenchKeys)
			}
		}
		// The virtual board's ladder: its steps name no device or probe,
		// and go to the board as a sequence's do under --sim.
		d.seq = &Sequence{}
		pb.Ladder = d.ladder(pairs, &Bench{File: d.file})
	default:
		// An inline bench; a mapping with only a name binds nothing.
		pb.Bench = d.bench(pairs, "a bench of the pool", poolBenchKeys)
		pb.Ladder = pb.Bench.Ladder
	}
	if pb.Name == "" {
		return nil
	}
	return pb
}

// String names the bench for messages: its name, and where it is defined.
func (pb *PoolBench) String() string {
	return fmt.Sprintf("bench %s (%s)", pb.Name, pb.Pos)
}
