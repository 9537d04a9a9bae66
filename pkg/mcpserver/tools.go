package mcpserver

import (
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hilrun/hilrun/pkg/steps"
)

func lockTimeout() mcp.ToolOption {
	return mcp.WithInteger("lock_timeout_ms", mcp.Min(0),
		mcp.Description("How long to wait, in milliseconds, when another call holds the port or probe; 0 (the default) fails at once with \"busy: held by ...\"."))
}

func connectionArg() mcp.ToolOption {
	return mcp.WithString("connection",
		mcp.Description("A connection id from serial_open (c1), its label, or its port path; may be left out when exactly one connection is open. connection_id is accepted too."))
}

func connectionIDArg() mcp.ToolOption {
	return mcp.WithString("connection_id", mcp.Description("Same as connection."))
}

// anyOf sets a property's schema to one of several.
func anyOf(schemas ...map[string]any) mcp.PropertyOption {
	return func(m map[string]any) {
		list := make([]any, len(schemas))
		for i, s := range schemas {
			list[i] = s
		}
		m["anyOf"] = list
	}
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

func (s *Server) addTools() {
	s.addTool(mcp.NewTool("serial_sequence",
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
		lockTimeout(),
		outputSchema[sequenceResult](),
		mcp.WithReadOnlyHintAnnotation(false),
		mcp.WithDestructiveHintAnnotation(true),
		mcp.WithIdempotentHintAnnotation(false),
		mcp.WithOpenWorldHintAnnotation(false),
	), toolHandler(s, s.serialSequence))

	s.addTool(mcp.NewTool("run_sequence",
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
	), toolHandler(s, s.runSequence))

	s.addTool(mcp.NewTool("validate_sequence",
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
	), toolHandler(s, s.validateSequence))

	s.addTool(mcp.NewTool("list_ports",
		mcp.WithTitleAnnotation("List serial ports"),
		mcp.WithDescription("List the serial ports this server may use: path, USB VID:PID, serial number, product, and a board name for well-known adapters (ST-Link, CP210x, CH340, FTDI, Espressif, Raspberry Pi Debug Probe, J-Link, ...). Ports refused by the server's policy are left out; under --sim the virtual board's port comes first."),
		outputSchema[listPortsResult](),
		mcp.WithReadOnlyHintAnnotation(true),
		mcp.WithIdempotentHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(false),
	), toolHandler(s, s.listPorts))

	s.addTool(mcp.NewTool("serial_open",
		mcp.WithTitleAnnotation("Open a serial port"),
		mcp.WithDescription("Open a serial port and keep it open as a connection (c1, c2, ...) until serial_close. Everything it receives is buffered (read it with serial_read or serial_expect by cursor) and logged to hilrun://connections/{id}/log."),
		mcp.WithString("port", mcp.Required(), mcp.Description("The device path, such as /dev/ttyACM0 or /dev/serial/by-id/... (see list_ports), or the name of a device of the server's bench file: its port and settings, and its name as the label.")),
		mcp.WithInteger("baud", mcp.Description("Bit rate; default 115200. baud_rate is accepted too.")),
		mcp.WithInteger("baud_rate", mcp.Description("Same as baud.")),
		mcp.WithString("line_ending", mcp.Enum("lf", "crlf", "cr", "none"), mcp.Description("What serial_write's newline and sequence sends append; default lf.")),
		mcp.WithString("label", mcp.Description("A name for the connection (letters, digits, underscores), usable wherever a connection id is.")),
		mcp.WithString("data_bits", mcp.Enum("5", "6", "7", "8"), mcp.Description("5, 6, 7 or 8; default 8; the numbers are accepted too.")),
		mcp.WithString("parity", mcp.Enum("none", "odd", "even", "mark", "space"), mcp.Description("Default none.")),
		mcp.WithString("stop_bits", mcp.Enum("1", "1.5", "2"), mcp.Description("1 (the default), 1.5 or 2; the numbers are accepted too.")),
		mcp.WithString("flow_control", mcp.Enum("none", "rtscts", "xonxoff", "hardware", "software"), mcp.Description("Default none; hardware is rtscts, software is xonxoff.")),
		mcp.WithString("prompt", mcp.Description(`The device's command prompt: text ("=> " for U-Boot), or an RE2 regular expression with prompt_regex: true ({"regex": "RE2"} is accepted too). Sequences on this connection then wait, before each send (not send_ctrl), until the device is back at its prompt, and each expect ends at the next prompt. A prompt counts at the start of a line.`)),
		mcp.WithBoolean("prompt_regex", mcp.Description("prompt is an RE2 regular expression; default false.")),
		mcp.WithBoolean("echo", mcp.Description("The device echoes what it receives: each sequence send waits for the echo of its line and checks it, and its expect starts after the echo.")),
		lockTimeout(),
		outputSchema[openResult](),
		mcp.WithReadOnlyHintAnnotation(false),
		mcp.WithDestructiveHintAnnotation(false),
		mcp.WithOpenWorldHintAnnotation(false),
	), toolHandler(s, s.serialOpen))

	s.addTool(mcp.NewTool("serial_close",
		mcp.WithTitleAnnotation("Close a serial connection"),
		mcp.WithDescription("Close a connection opened with serial_open. Its log stays readable as a resource, as long as it is among the logs of the last 50 connections closed."),
		connectionArg(), connectionIDArg(), lockTimeout(),
		outputSchema[closeResult](),
		mcp.WithReadOnlyHintAnnotation(false),
		mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(false),
	), toolHandler(s, s.serialClose))

	s.addTool(mcp.NewTool("serial_status",
		mcp.WithTitleAnnotation("Show serial connections"),
		mcp.WithDescription("Show every open connection (or one): id, label, port, baud, connected, released (let go of for another program by console_release), bytes received and sent, cursor (the end of what was received), read_cursor (where serial_read without a cursor continues), the log paths, and who holds the port right now."),
		connectionArg(), connectionIDArg(),
		outputSchema[statusResult](),
		mcp.WithReadOnlyHintAnnotation(true),
		mcp.WithIdempotentHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(false),
	), toolHandler(s, s.serialStatus))

	s.addTool(mcp.NewTool("serial_write",
		mcp.WithTitleAnnotation("Write to a serial connection"),
		mcp.WithDescription("Write data to a connection and return the cursor from just before the write: the reply begins there, so pass it to serial_expect or serial_read. Nothing is appended unless newline says so."),
		connectionArg(), connectionIDArg(),
		mcp.WithString("data", mcp.Description("What to write, in encoding.")),
		mcp.WithString("encoding", mcp.Enum("utf8", "hex", "base64"), mcp.Description("How data is written: utf8 (the default), hex (\"0d 0a ff\") or base64; control characters can be sent as hex or with ctrl.")),
		mcp.WithBoolean("newline", mcp.Description("true appends the connection's line ending (serial_open's line_ending); default false (nothing appended). The strings lf, crlf, cr and none are accepted too, for that line ending.")),
		mcp.WithString("ctrl", mcp.Description("Send one control key instead of data: c for Ctrl-C, d for Ctrl-D, or ^], ctrl-z...")),
		lockTimeout(),
		outputSchema[writeResult](),
		mcp.WithReadOnlyHintAnnotation(false),
		mcp.WithDestructiveHintAnnotation(false),
		mcp.WithOpenWorldHintAnnotation(false),
	), toolHandler(s, s.serialWrite))

	s.addTool(mcp.NewTool("serial_read",
		mcp.WithTitleAnnotation("Read from a serial connection"),
		mcp.WithDescription(`Read what a connection received, by cursor (an absolute byte offset into the received stream).
Without duration_ms it returns at once what is buffered from cursor on; without cursor it continues where the previous serial_read (or serial_expect) on this connection ended, which on the first read is the start of the retained buffer (at least the last 1 MiB). timeout_ms waits that long for a first byte, then returns the burst.
With duration_ms (or idle_timeout_ms / initial_timeout_ms) it collects a capture window from cursor, or, when cursor is left out, from where the previous read ended, so bytes that arrived since (a reply to a serial_write) are never skipped: start_trigger first_byte (the default) opens the window when the first byte arrives, immediate at once; it ends after duration_ms, after idle_timeout_ms of silence, when initial_timeout_ms (default: the window's length) passes with no byte, or at max_bytes.
Returns data, cursor (where the next read continues), start, bytes and reason (available, max_bytes, data, timeout, duration, idle, no_data).`),
		connectionArg(), connectionIDArg(),
		mcp.WithInteger("cursor", mcp.Min(0), mcp.Description("Where to start reading: a cursor from serial_write, serial_read or serial_expect; 0 is the oldest retained byte.")),
		mcp.WithInteger("max_bytes", mcp.Min(1), mcp.Description("At most this many bytes; default 65536.")),
		mcp.WithString("encoding", mcp.Enum("utf8", "hex", "base64"), mcp.Description("How data is returned; utf8 (the default) shows invalid bytes as U+FFFD.")),
		mcp.WithInteger("timeout_ms", mcp.Min(0), mcp.Description("Wait up to this long for the first byte.")),
		mcp.WithInteger("duration_ms", mcp.Min(0), mcp.Description("Capture window length.")),
		mcp.WithString("start_trigger", mcp.Enum("immediate", "first_byte"), mcp.Description("When the capture window opens; default first_byte.")),
		mcp.WithInteger("initial_timeout_ms", mcp.Min(0), mcp.Description("End the capture with reason no_data if nothing arrives in this time.")),
		mcp.WithInteger("idle_timeout_ms", mcp.Min(0), mcp.Description("End the capture after this much silence once data arrived.")),
		lockTimeout(),
		outputSchema[readResult](),
		mcp.WithReadOnlyHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(false),
	), toolHandler(s, s.serialRead))

	s.addTool(mcp.NewTool("serial_expect",
		mcp.WithTitleAnnotation("Wait for output on a serial connection"),
		mcp.WithDescription(`Wait until the output of a connection contains pattern (a literal, or an RE2 regular expression with regex: true), matching the raw byte stream so prompts without a line end are found. Without cursor it waits for new output only; pass the cursor serial_write returned to match its reply. Returns matched, timed_out, data (from cursor up to the end of the match), cursor (just past the match; on a timeout the cursor given, so calling again rescans), match and groups. One call waits at most 120 s. A regex match that more output could still change (adc=(\d+) on "adc=40" while "95" is on its way, or one that relies on \b at the last byte received) is returned once a byte decides it, the line has been quiet for settle_ms, or timeout_ms passes; a match a delimiter ends, and a literal, return at once.`),
		connectionArg(), connectionIDArg(),
		mcp.WithString("pattern", mcp.Required(), mcp.Description("What to wait for.")),
		mcp.WithBoolean("regex", mcp.Description("Read pattern as an RE2 regular expression; default false (literal).")),
		mcp.WithInteger("timeout_ms", mcp.Min(0), mcp.Description("How long to wait; default 5000, at most 120000.")),
		mcp.WithInteger("settle_ms", mcp.Min(0), mcp.Max(60000), mcp.Description("How long a regex match that more output could still change waits for the line to go quiet; default 1000, 0 returns it at once.")),
		mcp.WithInteger("cursor", mcp.Min(0), mcp.Description("Match only output from this cursor on.")),
		mcp.WithString("encoding", mcp.Enum("utf8", "hex", "base64"), mcp.Description("How data is returned; default utf8.")),
		lockTimeout(),
		outputSchema[expectResult](),
		mcp.WithReadOnlyHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(false),
	), toolHandler(s, s.serialExpect))

	s.addBuildTools()

	memCommon := []mcp.ToolOption{
		mcp.WithString("probe", mcp.Description("A probe of the server's bench file, or any name under --sim (the virtual board); may be left out when there is one.")),
		numberText("address", "The address, as text: \"0x48000014\" (hex), or decimal; a JSON number is accepted too."),
		mcp.WithString("symbol", mcp.Description("A symbol of the ELF file instead of address; its size gives the width.")),
		mcp.WithString("elf", mcp.Description("The ELF file for symbol, under a --root (elf_path is accepted too).")),
		mcp.WithString("elf_path", mcp.Description("Same as elf.")),
		mcp.WithInteger("offset", mcp.Description("Added to the address or symbol, in bytes.")),
		mcp.WithInteger("width", mcp.Description("Access width in bits: 8, 16, 32 (the default) or 64. Where the target has no 64-bit bus accesses (a 32-bit core such as a Cortex-M), a 64-bit value is read or written as two 32-bit words, low word first (little-endian), so not in one access.")),
	}
	readOpts := append([]mcp.ToolOption{
		mcp.WithTitleAnnotation("Read target memory"),
		mcp.WithDescription("Read target memory through the probe's persistent OpenOCD session. Returns the values as numbers and as hex."),
		mcp.WithInteger("count", mcp.Min(1), mcp.Description("How many values to read; default 1.")),
		lockTimeout(),
		outputSchema[memResult](),
		mcp.WithReadOnlyHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(false),
	}, memCommon...)
	s.addTool(mcp.NewTool("mem_read", readOpts...), toolHandler(s, s.memRead))

	writeOpts := append([]mcp.ToolOption{
		mcp.WithTitleAnnotation("Write target memory"),
		mcp.WithDescription("Write target memory through the probe's persistent OpenOCD session. Refused when the server is --read-only, and outside the --allow-mem-write ranges when any are given."),
		numberText("value", "The value, as text: \"0x40\" (hex), or decimal; a JSON number is accepted too."),
		mcp.WithArray("values", mcp.WithStringItems(mcp.Pattern(numberPattern)), mcp.Description("Several values written from the address on, instead of value, as text like value (JSON numbers are accepted too).")),
		mcp.WithBoolean("verify", mcp.Description("Read back and compare.")),
		lockTimeout(),
		outputSchema[memResult](),
		mcp.WithReadOnlyHintAnnotation(false),
		mcp.WithDestructiveHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(false),
	}, memCommon...)
	s.addTool(mcp.NewTool("mem_write", writeOpts...), toolHandler(s, s.memWrite))

	s.addSeedTools()
	s.addPIOTools()
}

func (s *Server) addBuildTools() {
	common := []mcp.ToolOption{
		mcp.WithArray("command", mcp.WithStringItems(), mcp.Description(`The command as an argument vector, run without a shell: ["make", "-C", "firmware"].`)),
		mcp.WithString("dir", mcp.Description("The command's working folder, under a --root: absolute, or relative to the first --root (the default).")),
		mcp.WithObject("env", mcp.Description("Variables added to the command's environment: name -> value."), mcp.AdditionalProperties(map[string]any{"type": "string"})),
		mcp.WithObject("pio", mcp.Description("Run PlatformIO instead of command: {project_dir (under a --root), env, verbose, clean}."),
			mcp.Properties(map[string]any{
				"project_dir": map[string]any{"type": "string"}, "env": map[string]any{"type": "string"},
				"verbose": map[string]any{"type": "boolean"}, "clean": map[string]any{"type": "boolean"},
			}), mcp.AdditionalProperties(false)),
		mcp.WithInteger("timeout_ms", mcp.Min(0), mcp.Description("Stops the tool after this many milliseconds (ok false, class Timeout); 0 means no bound.")),
		mcp.WithBoolean("background", mcp.Description("Return {task_id} at once and run in the background; follow it with task_status.")),
		lockTimeout(),
	}
	s.addTool(mcp.NewTool("build", append([]mcp.ToolOption{
		mcp.WithTitleAnnotation("Build firmware"),
		mcp.WithDescription(`Build firmware with a command (make, cmake, ninja, a compiler) or PlatformIO, inside the server's --root folders, and return a compact outcome: ok, and on failure the class (MissingHeader, UndefinedReference, MemoryOverflow, SyntaxError, MissingPackage, ...) with the first diagnostic (file, line, column, message) and the tail of the output; on success the flash and RAM use (from elf, or from PlatformIO's summary).
The whole output is the resource log_resource (hilrun://tasks/{task_id}/log). With a progress token, output lines arrive as progress notifications (at most 10 a second). A failing build is a result (ok false), not a tool error; a tool error means the build did not run (refused, a tool that is not installed, cancelled).`),
		mcp.WithString("elf", mcp.Description("The image the build makes, relative to dir, for its sizes; a build that does not make it fails.")),
		outputSchema[buildResult](),
		mcp.WithReadOnlyHintAnnotation(false),
		mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(false),
	}, common...)...), toolHandler(s, s.buildTool))

	s.addTool(mcp.NewTool("upload", append([]mcp.ToolOption{
		mcp.WithTitleAnnotation("Upload firmware"),
		mcp.WithDescription(`Upload firmware: with a command (an uploader run inside a --root folder), with PlatformIO (pio run -t upload), or by writing an image file (under a --root) through the probe's OpenOCD session (openocd: program into flash, or load into RAM). Refused when the server is --read-only.
port names a connection (id, label or port path) or a port path: the connection's console lets go of the port for the upload and takes it back after, and the port is held for the whole upload, so serial_read, serial_expect and sequences on it get "busy" (or wait lock_timeout_ms) instead of disturbing it. Returns the same outcome as build.`),
		mcp.WithObject("openocd", mcp.Description("Write an image through OpenOCD instead: {file (ELF, hex, S-record or binary, under a --root), method: program (flash, the default) or load (RAM, load_image), verify, reset, offset}."),
			mcp.Properties(map[string]any{
				"file": map[string]any{"type": "string"}, "method": map[string]any{"type": "string", "enum": []string{"program", "load"}},
				"verify": map[string]any{"type": "boolean"}, "reset": map[string]any{"type": "boolean"},
				"offset": map[string]any{"type": "string", "pattern": numberPattern, "description": "Where the image goes, as text (\"0x08004000\"); a JSON number is accepted too."},
			}), mcp.AdditionalProperties(false)),
		mcp.WithString("probe", mcp.Description("The probe for openocd: one of the server's bench file, or any name under --sim; may be left out when there is one.")),
		mcp.WithString("port", mcp.Description("The upload port: a connection id, label or port path; its console is released for the upload and taken back after.")),
		outputSchema[buildResult](),
		mcp.WithReadOnlyHintAnnotation(false),
		mcp.WithDestructiveHintAnnotation(true),
		mcp.WithIdempotentHintAnnotation(false),
		mcp.WithOpenWorldHintAnnotation(false),
	}, common...)...), toolHandler(s, s.uploadTool))

	s.addTool(mcp.NewTool("task_status",
		mcp.WithTitleAnnotation("Show a build or upload task"),
		mcp.WithDescription(`Show a build or upload task: state (running, done, failed: it could not run, cancelled), started, duration_ms, the last lines of output (progress), and when done the result, as build and upload return it. The last 50 tasks are kept.`),
		mcp.WithString("task_id", mcp.Required(), mcp.Description("The task_id build or upload returned.")),
		outputSchema[taskStatus](),
		mcp.WithReadOnlyHintAnnotation(true),
		mcp.WithIdempotentHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(false),
	), toolHandler(s, s.taskStatus))
}
