package cli

import (
	"fmt"
	"maps"
	"strings"

	"github.com/hilrun/hilrun/pkg/steps"
)

// barePort takes the one --port PATH without a device name out of the
// --port flags: a port path, not NAME=PATH (a name holds no "/").
func barePort(items []string) (string, []string, error) {
	var bare string
	var named []string
	for _, it := range items {
		k, _, ok := strings.Cut(it, "=")
		if ok && k != "" && !strings.ContainsAny(k, `/\`) {
			named = append(named, it)
			continue
		}
		if bare != "" {
			return "", nil, fmt.Errorf("--port %s and --port %s: only one port may be given without a device name; name the devices, --port NAME=PATH", bare, it)
		}
		bare = it
	}
	return bare, named, nil
}

// portsFor is --port for seq: the named ports, and a bare --port PATH
// for the sequence's only device.
func portsFor(seq *steps.Sequence, f bindFlags) (map[string]string, error) {
	if f.port == "" {
		return f.ports, nil
	}
	if len(seq.Devices) != 1 {
		var names []string
		for _, d := range seq.Devices {
			names = append(names, d.Name)
		}
		return nil, fmt.Errorf("--port %s: the sequence %s has %d devices (%s): say which one, --port NAME=%s", f.port, seq.File, len(names), strings.Join(names, ", "), f.port)
	}
	name := seq.Devices[0].Name
	if p, ok := f.ports[name]; ok {
		return nil, fmt.Errorf("--port %s and --port %s=%s both bind device %s: give one", f.port, name, p, name)
	}
	ports := maps.Clone(f.ports)
	if ports == nil {
		ports = map[string]string{}
	}
	ports[name] = f.port
	return ports, nil
}
