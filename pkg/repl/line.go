package repl

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/hilrun/hilrun/pkg/steps"
)

// commandHelp documents the short commands, in the order :help lists them.
var commandHelp = []struct{ name, args, what string }{
	{"send", "TEXT", "send TEXT and the device's line ending"},
	{"expect", "PATTERN [TIMEOUT]", "wait for PATTERN from where the last step left off"},
	{"delay", "DURATION", "wait, e.g. delay 100ms"},
	{"capture", "DURATION", "record what the device prints for DURATION"},
	{"mdw", "ADDR [COUNT]", "read COUNT 32-bit words of memory through the probe"},
	{"mww", "ADDR VALUE", "write a 32-bit word of memory"},
	{"read", "SYMBOL", "read an ELF symbol through the probe"},
	{"write", "SYMBOL VALUE", "write an ELF symbol"},
	{"reset", "", "reset the target through the probe and let it run"},
	{"reset_sequence", "NAME", "play a DTR/RTS reset on the device: esp32 (into the bootloader), esp32_run, arduino"},
	{"break", "DURATION", "send a break on the device, e.g. break 250ms"},
	{"snap", "[LABEL]", "take a picture with the camera"},
	{"exec", "PROGRAM [ARG...]", "run a host command (no shell)"},
	{"power", "on|off|cycle [BOARD]", "switch a board's power with the bench file's commands"},
	{"run", "FILE", "run a sequence file against the open devices"},
	{"use", "DEVICE", "make DEVICE the one steps without to: talk to"},
}

// metaHelp documents the colon commands.
var metaHelp = []struct{ name, args, what string }{
	{":next", "", "run the next step of the loaded file"},
	{":list", "", "list the steps of the loaded file, marking the next one"},
	{":steps", "", "list the steps run so far"},
	{":vars", "", "list the variables"},
	{":record", "[--expects] FILE", "write the steps run so far as a sequence file"},
	{":raw", "", "pass keystrokes straight to the device until Ctrl-]"},
	{":help", "", "this help"},
	{":quit", "", "close the ports and exit (or Ctrl-D)"},
}

// translate turns a typed line into the YAML text of one step: a short
// command becomes its flow mapping, a line in flow form is kept as typed.
func translate(line string) (string, error) {
	line = strings.TrimSpace(line)
	if strings.HasPrefix(line, "{") || strings.HasPrefix(line, "[") {
		return line, nil
	}
	name, rest, _ := strings.Cut(line, " ")
	rest = strings.TrimSpace(rest)
	args := strings.Fields(rest)
	need := func(lo, hi int, usage string) error {
		if len(args) < lo || len(args) > hi {
			return fmt.Errorf("usage: %s %s", name, usage)
		}
		return nil
	}
	switch name {
	case "send":
		return fmt.Sprintf("{send: %s}", strconv.Quote(rest)), nil
	case "expect":
		if rest == "" {
			return "", fmt.Errorf("usage: expect PATTERN [TIMEOUT]")
		}
		pattern, timeout := rest, ""
		if len(args) > 1 {
			last := args[len(args)-1]
			if _, err := time.ParseDuration(last); err == nil {
				timeout = last
				pattern = strings.TrimSpace(strings.TrimSuffix(rest, last))
			}
		}
		if timeout != "" {
			return fmt.Sprintf("{expect: %s, timeout: %s}", strconv.Quote(pattern), timeout), nil
		}
		return fmt.Sprintf("{expect: %s}", strconv.Quote(pattern)), nil
	case "reset_sequence", "break":
		if err := need(1, 1, map[string]string{"reset_sequence": "NAME", "break": "DURATION"}[name]); err != nil {
			return "", err
		}
		return fmt.Sprintf("{%s: %s}", name, strconv.Quote(args[0])), nil
	case "snap":
		if err := need(0, 1, "[LABEL]"); err != nil {
			return "", err
		}
		if len(args) == 1 {
			return fmt.Sprintf("{capture: true, label: %s}", strconv.Quote(args[0])), nil
		}
		return "{capture: true}", nil
	case "exec":
		if len(args) == 0 {
			return "", fmt.Errorf("usage: exec PROGRAM [ARG...]")
		}
		quoted := make([]string, len(args))
		for i, a := range args {
			quoted[i] = strconv.Quote(a)
		}
		return fmt.Sprintf("{exec: [%s]}", strings.Join(quoted, ", ")), nil
	case "power":
		if err := need(1, 2, "on|off|cycle [BOARD]"); err != nil {
			return "", err
		}
		if len(args) == 2 {
			return fmt.Sprintf("{power: {device: %s, action: %s}}", strconv.Quote(args[1]), strconv.Quote(args[0])), nil
		}
		return fmt.Sprintf("{power: %s}", strconv.Quote(args[0])), nil
	case "delay", "capture":
		if err := need(1, 1, "DURATION"); err != nil {
			return "", err
		}
		return fmt.Sprintf("{%s: %s}", name, strconv.Quote(args[0])), nil
	case "mdw":
		if err := need(1, 2, "ADDR [COUNT]"); err != nil {
			return "", err
		}
		if len(args) == 2 {
			return fmt.Sprintf("{mem_read: %s, count: %s}", args[0], args[1]), nil
		}
		return fmt.Sprintf("{mem_read: %s}", args[0]), nil
	case "mww":
		if err := need(2, 2, "ADDR VALUE"); err != nil {
			return "", err
		}
		return fmt.Sprintf("{mem_write: %s, value: %s}", args[0], args[1]), nil
	case "read":
		if err := need(1, 1, "SYMBOL"); err != nil {
			return "", err
		}
		return fmt.Sprintf("{mem_read: true, symbol: %s}", strconv.Quote(args[0])), nil
	case "write":
		if err := need(2, 2, "SYMBOL VALUE"); err != nil {
			return "", err
		}
		return fmt.Sprintf("{mem_write: true, symbol: %s, value: %s}", strconv.Quote(args[0]), args[1]), nil
	case "reset":
		if err := need(0, 0, ""); err != nil {
			return "", err
		}
		return "{reset: run}", nil
	}
	return "", fmt.Errorf("unknown command %q: type :help for the commands, or write a step in flow form such as {send: AT, expect: OK}", name)
}

// stepNodes parses the YAML text of one step, or of a flow list of steps,
// into step nodes, giving serial steps that name no device to: dev when
// the session has several devices.
func stepNodes(text, dev string, several bool) ([]*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return nil, fmt.Errorf("invalid step: %v", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("empty step")
	}
	if err := steps.CheckAliases("step", doc.Content[0]); err != nil {
		return nil, err
	}
	root := doc.Content[0]
	var nodes []*yaml.Node
	if root.Kind == yaml.SequenceNode {
		nodes = root.Content
	} else {
		nodes = []*yaml.Node{root}
	}
	for _, n := range nodes {
		n.Style = yaml.FlowStyle
		if n.Kind != yaml.MappingNode || !several || hasKey(n, "to") {
			continue
		}
		var m map[string]any
		if n.Decode(&m) != nil || !steps.TalksToDevice(m) {
			continue
		}
		n.Content = append(n.Content, scalar("to"), scalar(dev))
	}
	return nodes, nil
}

func hasKey(n *yaml.Node, key string) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}

func hasAnyKey(n *yaml.Node, keys []string) bool {
	for _, k := range keys {
		if hasKey(n, k) {
			return true
		}
	}
	return false
}

func scalar(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

func mapping(style yaml.Style, kv ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: style, Content: kv}
}
