package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hilrun/hilrun/pkg/steps"
)

// inlineFile names sequences given inline, in their errors and reports.
const inlineFile = "serial_sequence"

type sequenceArgs struct {
	Steps           json.RawMessage `json:"steps"`
	Finally         json.RawMessage `json:"finally"`
	OnFailure       string          `json:"on_failure"`
	FilterResponses bool            `json:"filter_responses"`
	Vars            map[string]any  `json:"vars"`
	Devices         map[string]any  `json:"devices"`
	TimeoutMS       int64           `json:"timeout_ms"`
	Name            string          `json:"name"`
	LockTimeoutMS   *int64          `json:"lock_timeout_ms"`
	// Retries is the sequence's retries:, unless steps holds a whole
	// sequence that says it.
	Retries *int `json:"retries"`
}

func (s *Server) serialSequence(ctx context.Context, req mcp.CallToolRequest, a *sequenceArgs) (any, string, error) {
	seq, err := s.inlineSequence(a)
	if err != nil {
		return nil, "", err
	}
	return s.execute(ctx, req, seq, execOptions{lockWait: lockWait(a.LockTimeoutMS), ladder: true})
}

// inlineSequence turns serial_sequence's arguments into a validated
// sequence whose devices name the open connections the steps refer to.
// The steps are decoded from the call's JSON as the client wrote it, so a
// problem is reported at its JSON pointer: "serial_sequence: /steps/3/expect".
func (s *Server) inlineSequence(a *sequenceArgs) (*steps.Sequence, error) {
	parts, err := readParts(a)
	if err != nil {
		return nil, err
	}
	top, err := s.topLevel(a, parts)
	if err != nil {
		return nil, err
	}
	seq, err := steps.ParseValue(inlineFile, top, steps.LoadOptions{})
	if err != nil {
		var el steps.ErrorList
		if errors.As(err, &el) {
			return nil, fmt.Errorf("invalid steps:\n%w", el)
		}
		return nil, err
	}
	seq.FilterResponses = a.FilterResponses
	return seq, nil
}

// inlineParts are serial_sequence's step lists as JSON, with, when steps
// holds a whole sequence mapping, its other sections.
type inlineParts struct {
	steps, finally json.RawMessage
	sections       map[string]json.RawMessage
	// stepList and finallyList are the lists decoded, for the server to
	// find the connections they name.
	stepList, finallyList []any
}

// readParts reads the steps and finally arguments: JSON arrays of step
// objects, or strings holding such an array (as JSON or YAML), or, in
// steps, a whole sequence mapping.
func readParts(a *sequenceArgs) (*inlineParts, error) {
	st, err := stepsJSON(a.Steps, "steps")
	if err != nil {
		return nil, err
	}
	fin, err := stepsJSON(a.Finally, "finally")
	if err != nil {
		return nil, err
	}
	p := &inlineParts{}
	if isObject(st) {
		// A whole sequence mapping in steps: its sections, then the
		// arguments.
		if err := json.Unmarshal(st, &p.sections); err != nil {
			return nil, fmt.Errorf("steps: %v", err)
		}
		if _, ok := p.sections["probes"]; ok {
			// Probes say which OpenOCD to reach or launch: only the
			// bench file and --sim may say that.
			return nil, refused("steps: a probes section is not accepted here; probes come from the server's --bench file or --sim")
		}
		st = p.sections["steps"]
		if fin == nil {
			fin = p.sections["finally"]
		}
		delete(p.sections, "steps")
		delete(p.sections, "finally")
	}
	if p.stepList, err = decodeList(st); err != nil || p.stepList == nil {
		return nil, errors.New(`steps must be a list of step objects, like [{"send": "version", "expect": "OK"}, {"delay_ms": 500}], or a string holding one`)
	}
	if len(p.stepList) == 0 {
		return nil, errors.New("steps is empty: give at least one step")
	}
	if !isNull(fin) {
		if p.finallyList, err = decodeList(fin); err != nil || p.finallyList == nil {
			return nil, errors.New("finally must be a list of step objects")
		}
	}
	p.steps, p.finally = st, fin
	return p, nil
}

// stepsJSON is a step list argument as JSON: as the client wrote it, or,
// when it is a string, the JSON of the YAML (or JSON) the string holds;
// nil when it is absent or null.
func stepsJSON(raw json.RawMessage, what string) (json.RawMessage, error) {
	t := bytes.TrimSpace(raw)
	if isNull(t) {
		return nil, nil
	}
	if t[0] != '"' {
		return t, nil
	}
	var text string
	if err := json.Unmarshal(t, &text); err != nil {
		return nil, fmt.Errorf("%s: %v", what, err)
	}
	var v any
	if err := steps.UnmarshalYAML(what, []byte(text), &v); err != nil {
		if el := (steps.ErrorList)(nil); errors.As(err, &el) {
			return nil, el // a limit, which names the text
		}
		return nil, fmt.Errorf("%s: the string is not a JSON (or YAML) list of steps: %v", what, err)
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", what, err)
	}
	return data, nil
}

func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

func isObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{'
}

// decodeList decodes a JSON array; nil (and no error) for anything else.
func decodeList(raw json.RawMessage) ([]any, error) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '[' {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var list []any
	if err := dec.Decode(&list); err != nil {
		return nil, err
	}
	if list == nil {
		list = []any{}
	}
	return list, nil
}

// topLevel is the one place that turns serial_sequence's arguments into
// the sequence's top-level mapping: the step lists first, as the client
// wrote them, then the sections of a whole sequence given in steps and
// what the arguments say (name, on_failure, timeout, vars, devices),
// sorted by key.
func (s *Server) topLevel(a *sequenceArgs, p *inlineParts) (steps.Object, error) {
	rest := map[string]any{}
	for k, v := range p.sections {
		rest[k] = v
	}
	if a.Name != "" {
		rest["name"] = a.Name
	}
	if _, ok := rest["name"]; !ok {
		rest["name"] = inlineFile
	}
	switch strings.ToLower(a.OnFailure) {
	case "":
		if _, ok := rest["on_failure"]; !ok {
			rest["on_failure"] = "continue"
		}
	case "continue", "stop":
		rest["on_failure"] = strings.ToLower(a.OnFailure)
	default:
		return nil, fmt.Errorf("on_failure %q: want continue or stop", a.OnFailure)
	}
	if a.TimeoutMS > 0 {
		rest["timeout"] = fmt.Sprintf("%dms", a.TimeoutMS)
	}
	if _, ok := rest["retries"]; !ok && a.Retries != nil {
		rest["retries"] = *a.Retries
	}
	if len(a.Vars) > 0 {
		rest["vars"] = a.Vars
	}
	devices, err := s.inlineDevices(p, a.Devices)
	if err != nil {
		return nil, err
	}
	if len(devices) > 0 {
		rest["devices"] = devices
	}
	top := steps.Object{{Key: "steps", Value: p.steps}}
	if p.finally != nil {
		top = append(top, steps.Member{Key: "finally", Value: p.finally})
	}
	for _, k := range slices.Sorted(maps.Keys(rest)) {
		top = append(top, steps.Member{Key: k, Value: rest[k]})
	}
	return top, nil
}

var nameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// inlineDevices are the devices of an inline sequence: those of a whole
// sequence given in steps, then those of the devices argument, then one
// for every open connection (or bench device) the steps name, and for the
// only connection (or bench device) when some serial step names none.
func (s *Server) inlineDevices(p *inlineParts, given map[string]any) (map[string]any, error) {
	devices := map[string]any{}
	var section map[string]json.RawMessage
	if json.Unmarshal(p.sections["devices"], &section) == nil {
		for k, v := range section {
			devices[k] = v
		}
	}
	maps.Copy(devices, given)
	named, omitted := connRefs(p.stepList, p.finallyList)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, to := range slices.Sorted(maps.Keys(named)) {
		if _, ok := devices[to]; !ok {
			s.declareLocked(devices, to)
		}
	}
	if omitted && len(named) == 0 && len(devices) == 0 {
		if err := s.declareOnlyLocked(devices); err != nil {
			return nil, err
		}
	}
	return devices, nil
}

// declareLocked declares device to when it names an open connection or a
// device of the server's bench file.
func (s *Server) declareLocked(devices map[string]any, to string) {
	c := s.findConnLocked(to)
	if c == nil && s.benchDevice(to) != nil && nameRE.MatchString(to) {
		// A device of the server's bench file: binding gives it its port
		// and settings.
		devices[to] = map[string]any{}
		return
	}
	if c == nil || steps.IsPortPath(to) || !nameRE.MatchString(to) {
		return
	}
	devices[to] = map[string]any{"port": c.port, "line_ending": c.lineEnding}
}

// declareOnlyLocked declares the device of serial steps that name none:
// the only connection, else the bench's only device; with several
// connections, or nothing at all to talk to, it is an error.
func (s *Server) declareOnlyLocked(devices map[string]any) error {
	switch {
	case len(s.conns) == 1:
		for _, c := range s.conns {
			devices[c.id] = map[string]any{"port": c.port, "line_ending": c.lineEnding}
		}
	case len(s.conns) == 0 && s.cfg.Bench != nil && len(s.cfg.Bench.Devices) == 1:
		for name := range s.cfg.Bench.Devices {
			devices[name] = map[string]any{}
		}
	case len(s.conns) > 1:
		return fmt.Errorf("several connections are open (%s): give to: (a connection id, label or port) on each serial step", s.connListLocked())
	case s.cfg.DefaultPort == "" && s.cfg.Bench == nil:
		return errors.New("a serial step has no to: and no connection is open: open one with serial_open, give to: a port path, or start hilrun mcp with --sim")
	}
	return nil
}

// connRefs are the connections (or devices) the steps of lists name: in
// to: on serial steps, and as the port of an upload (whose console the
// upload releases) or of an exec step (for a tool that opens the port).
// omitted says whether some serial step names none.
func connRefs(lists ...[]any) (named map[string]bool, omitted bool) {
	named = map[string]bool{}
	port := func(m map[string]any) {
		if p, ok := m["port"].(string); ok && p != "" && !steps.IsPortPath(p) {
			named[p] = true
		}
	}
	for _, l := range lists {
		rawSteps(l, func(m map[string]any) {
			if up, ok := m["upload"].(map[string]any); ok {
				port(up)
			}
			if _, ok := m["exec"]; ok {
				port(m)
			}
			if !steps.TalksToDevice(m) {
				return
			}
			if to, _ := m["to"].(string); to != "" {
				named[to] = true
			} else {
				omitted = true
			}
		})
	}
	return named, omitted
}

// rawSteps visits every step mapping of a raw step list, nested ones too.
func rawSteps(list []any, fn func(map[string]any)) {
	for _, st := range list {
		m, ok := st.(map[string]any)
		if !ok {
			continue
		}
		fn(m)
		if sub, ok := m["steps"].([]any); ok {
			rawSteps(sub, fn)
		}
		// The branches of a parallel: step, lists or {steps, finally}.
		branches, _ := m["parallel"].(map[string]any)
		for _, b := range branches {
			switch b := b.(type) {
			case []any:
				rawSteps(b, fn)
			case map[string]any:
				for _, key := range []string{"steps", "finally"} {
					if sub, ok := b[key].([]any); ok {
						rawSteps(sub, fn)
					}
				}
			}
		}
	}
}
