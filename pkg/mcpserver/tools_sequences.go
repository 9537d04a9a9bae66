package mcpserver

import (
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hilrun/hilrun/pkg/steps"
)

// sequenceTools run sequences, given inline or as a file under a root, and
// check them without running.
var sequenceTools = []tool{
	{
		spec: mcp.NewTool("serial_sequence",
			mcp.WithTitleAnnotation("Run a sequence of serial and memory steps"),
			mcp.WithDescription(`Run a multi-step hardware sequence (serial send/expect, delays, captures, memory reads and writes, camera pictures and image checks, reset lines, host commands, power, asserts) in one call, inside hilrun, with real timing between steps and no tool-call overhead. Use it for anything timing-sensitive: send a command and check the reply, toggle a GPIO over SWD with exact delays, mixed serial/memory flows.
The ports and probes the sequence uses are held for the whole run; another caller gets "busy" (or waits lock_timeout_ms). Cancelling the call stops the current step, runs the finally steps, releases the ports and returns what ran.
Returns one line per step (index, status, kind, name, duration, message) and a summary line ("passed 12/12 in 1.234s"), with structured results; the report and console logs stay readable as resources (hilrun://runs/{run_id}/...). A failing step is a result (status failed), not a tool error; a tool error means nothing ran (invalid steps, refused, busy).`),
			mcp.WithAny("steps", mcp.Required(), mcp.Description(stepsHelp+kindExamples()),
				anyOf(map[string]any{"type": "array", "items": map[string]any{"type": "object"}}, map[string]any{"type": "string"})),
			mcp.WithAny("finally", mcp.Description("Steps that always run at the end, after a failure, a timeout or a cancellation too (same forms as steps)."),
				anyOf(map[string]any{"type": "array", "items": map[string]any{"type": "object"}}, map[string]any{"type": "string"})),
			mcp.WithString("on_failure", mcp.Enum("continue", "stop"), mcp.DefaultString("continue"),
				mcp.Description("continue (the default) runs every step; stop skips the rest after the first failure (finally steps still run).")),
			mcp.WithBoolean("filter_responses", mcp.Description("If true, expects match only lines that begin with \">\", the response marker of firmware that interleaves logs with replies.")),
			mcp.WithObject("vars", mcp.Description("Variables for ${name} in steps and expressions: name -> text, number or boolean.")),
			mcp.WithObject("devices", mcp.Description("Devices as in a sequence file's devices section: name -> port path or {port, baud, line_ending, data_bits, parity, stop_bits, usb: {vid, pid, serial}, prompt, echo}; steps then say to: NAME. With a prompt (\"=> \", or {\"regex\": ...}) each send waits until the device is back at its prompt and each expect ends at the next prompt; with echo: true a send checks its echo and its expect starts after it.")),
			mcp.WithInteger("timeout_ms", mcp.Min(0), mcp.Description("Bounds the whole sequence (finally steps excepted), in milliseconds; 0 means no bound.")),
			mcp.WithString("name", mcp.Description("A name for the run, shown in the report.")),
			mcp.WithInteger("retries", mcp.Min(0), mcp.Max(float64(steps.MaxRetries)), mcp.Description("Run the whole sequence again, up to this many times, after an attempt that did not pass (the steps' before_retry: in a whole sequence given in steps runs first); every attempt is in the result's attempts, and one that passed after failing is flaky. A group step takes retries and before_retry too.")),
			lockTimeout(),
			outputSchema[sequenceResult](),
			mcp.WithReadOnlyHintAnnotation(false),
			mcp.WithDestructiveHintAnnotation(true),
			mcp.WithIdempotentHintAnnotation(false),
			mcp.WithOpenWorldHintAnnotation(false),
		),
		can:     does(stepCaps).eachStep(),
		handler: handle((*Server).serialSequence),
	},
	{
		spec: mcp.NewTool("run_sequence",
			mcp.WithTitleAnnotation("Run a sequence file"),
			mcp.WithDescription(`Run a hilrun sequence file (YAML or JSON) that lies under one of the server's --root folders, as hilrun run does, and return its report like serial_sequence. Devices and probes are bound by the server's --bench file (else hilrun.bench.yaml beside the sequence), then by ports/probes; under --sim, what is left goes to the virtual board.`),
			mcp.WithString("path", mcp.Required(), mcp.Description("The sequence file: absolute, or relative to the first --root.")),
			mcp.WithObject("vars", mcp.Description("Variables, as hilrun run --var NAME=VALUE: name -> value.")),
			mcp.WithObject("ports", mcp.Description("Bind devices to ports, as --port NAME=PATH: device name -> port path."), mcp.AdditionalProperties(map[string]any{"type": "string"})),
			mcp.WithObject("probes", mcp.Description("Bind probes to running OpenOCDs, as --openocd NAME=HOST:PORT: probe name -> telnet address. Only the server's own debuggers, or addresses its --allow-probe globs name."), mcp.AdditionalProperties(map[string]any{"type": "string"})),
			lockTimeout(),
			outputSchema[sequenceResult](),
			mcp.WithReadOnlyHintAnnotation(false),
			mcp.WithDestructiveHintAnnotation(true),
			mcp.WithOpenWorldHintAnnotation(false),
		),
		can:     does(stepCaps | steps.CapReadFiles).always(steps.CapReadFiles).eachStep(),
		handler: handle((*Server).runSequence),
	},
	{
		spec: mcp.NewTool("validate_sequence",
			mcp.WithTitleAnnotation("Check a sequence without running it"),
			mcp.WithDescription("Check a sequence file (path, under a --root) or sequence text (content, YAML or JSON: a sequence mapping or a bare list of steps) without touching any port. Returns valid, and each problem with its line and column."),
			mcp.WithString("path", mcp.Description("A sequence file under a --root.")),
			mcp.WithString("content", mcp.Description("The sequence as YAML or JSON text.")),
			mcp.WithString("format", mcp.Enum("yaml", "json"), mcp.Description("How to read content: yaml (the default, which also reads JSON) or json (strict JSON).")),
			mcp.WithArray("vars", mcp.WithStringItems(), mcp.Description("Names of variables that will be given when the sequence runs.")),
			outputSchema[validateResult](),
			mcp.WithReadOnlyHintAnnotation(true),
			mcp.WithIdempotentHintAnnotation(true),
			mcp.WithOpenWorldHintAnnotation(false),
		),
		can:     does(steps.CapReadFiles),
		handler: handle((*Server).validateSequence),
	},
}

// kindExamples lists the examples of the step kinds that describe
// themselves in a file of their own (steps.KindSpec.Example), so a new
// kind reaches the tool's help without an edit here.
func kindExamples() string {
	var ex []string
	for _, k := range steps.Kinds() {
		if k.Example != "" {
			ex = append(ex, k.Example)
		}
	}
	if len(ex) == 0 {
		return ""
	}
	return "\nAlso: " + strings.Join(ex, "    ")
}

const stepsHelp = `The steps to run, in order, as a JSON array of step objects (a string holding that JSON, or YAML, is accepted too). Every step kind of hilrun sequence files works, including these forms:
  {"send": "status", "to": "c1", "expect": "OK", "read_timeout": 2.0, "line_ending": "lf"}
  {"send": "version", "expect": {"regex": "v(\\d+)\\.(\\d+)"}, "save": ["major", "minor"], "timeout": "2s"}
  {"expect": "ready>", "timeout": "10s"}    {"send_ctrl": "c"}    {"send_hex": "0d 0a ff"}
  {"send": "", "to": "c1", "wait_prompt": false}    {"send": "boot", "expect": "Starting kernel", "until_prompt": false}    (on a device with a prompt)
  {"delay_ms": 500}    {"delay": "250ms"}
  {"capture": {"duration": "2s", "until": "idle", "label": "log"}, "save": "log_text"}
  {"assert": "num(major) >= 1", "message": "firmware too old"}    {"set": {"n": {"expr": "n + 1"}}}
  {"group": "boot", "steps": [...]}    {"repeat": {"count": 10, "every": "100ms", "as": "i"}, "steps": [...]}
  {"group": "echo", "matrix": {"baud": [9600, 115200], "fw": ["2.4.1", "2.5.0"], "exclude": [{"baud": 9600, "fw": "2.5.0"}]}, "steps": [{"send": "echo ${baud} ${fw}", "expect": "${fw}"}]}    (one group per case, named echo[baud=9600,fw=2.4.1], its values as variables; a failing case does not stop the next; a whole sequence mapping may have a matrix too; tags are accepted and kept, as in files, and select nothing here)
  {"mem_write": true, "address": "0x48000418", "value": "0x40", "probe": "target", "width": 32, "verify": true}
  {"mem_read": true, "address": "0x48000400", "count": 2, "probe": "target", "label": "gpio", "expect": {"mask": "0x20", "value": "0x20"}}
  {"mem_read": true, "symbol": "blink", "elf_path": "/path/to.elf"}    {"mem_poll": true, "symbol": "init_done", "until": "value == 1", "timeout": "2s"}
  {"halt": true}    {"resume": true}    {"reset": "run"}    {"openocd": "reg pc", "expect": "pc"}
  {"build": {"command": ["make", "-C", "fw"], "elf": "fw/build/fw.elf"}}    {"build": {"pio": {"project_dir": "fw", "env": "esp32dev"}}}
  {"upload": {"openocd": {"file": "fw/build/fw.elf", "verify": true, "reset": true}}, "probe": "target"}    {"upload": {"pio": {"project_dir": "fw"}, "port": "c1"}}
  {"capture": true, "label": "my_label", "device_index": 0}    {"capture": {"camera": "top", "label": "led", "frames": 2}, "expect_image": {"region": [224, 112, 32, 32], "brightness": ">0.6"}}
  {"expect_image": {"region": [224, 112, 32, 32], "color": "green", "tolerance": 0.3}}
  {"reset_sequence": "esp32", "to": "c1"}    {"lines": {"dtr": false, "rts": true, "hold": "100ms"}}    {"break": "250ms"}
  {"exec": ["uhubctl", "-a", "cycle", "-p", "2"], "timeout": "20s", "expect": "Sent power", "exit_code": 0}    {"power": {"device": "dut", "action": "cycle"}}
Build and upload commands, PlatformIO and exec steps run host programs: only when the server runs with --allow-exec, only inside its --root folders, never through a shell; an openocd step takes only typed commands (halt, resume, reset, md*, mw*, read_memory, reg, ...) with plain numbers unless the server runs with --allow-debug-tcl; an upload's port (a connection) is released for the upload and taken back after. Power commands and cameras come from the server's bench file (cameras also from --sim): name them, or a camera device by number. Camera pictures are saved as PNG files, returned as image content and readable as resources. A read-only server refuses lines, break, reset_sequence, power and exec.
"to" is a connection id or label from serial_open, a port path (opened for this sequence at 115200 8N1 unless already open), or left out when exactly one connection is open (with none open, the virtual board under --sim). "probe" names a probe of the bench file or, under --sim, the virtual board. Durations are strings with a unit ("250ms", "2s"); delay_ms and read_timeout (seconds) take bare numbers.`
