package hilrun

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"

	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/selectx"
	"github.com/hilrun/hilrun/pkg/steps"
)

// The JSON Schemas in schemas/ describe the same format as the loader in
// pkg/steps. These tests hold the two together:
//
//   - every example under sequences/ passes both;
//   - testdata/schema/good passes both and testdata/schema/bad fails both;
//   - testdata/schema/loader-only passes the schema but fails the loader,
//     which checks what a schema cannot (loaderOnly says what, per file);
//   - testdata/schema/schema-only fails the schema but passes the loader,
//     where the loader is more lenient than a schema can or should be
//     (schemaOnly says why, per file).
//
// A file named hilrun.bench.yaml or *.bench.yaml is a bench file: it is
// checked against bench.schema.json and loaded with steps.LoadBench; one
// named *.pool.yaml is a pool file (pool.schema.json, steps.LoadPool), and
// quarantine.yaml or *.quarantine.yaml a quarantine list
// (quarantine.schema.json, selectx.LoadQuarantine).

const draft2020 = "https://json-schema.org/draft/2020-12/schema"

const (
	sequenceSchemaFile   = "schemas/sequence.schema.json"
	benchSchemaFile      = "schemas/bench.schema.json"
	poolSchemaFile       = "schemas/pool.schema.json"
	quarantineSchemaFile = "schemas/quarantine.schema.json"
)

// badFiles maps each file in testdata/schema/bad to text the loader's error
// must contain, so each is rejected for the reason it was written for.
var badFiles = map[string]string{
	"assert-with-to.yaml":                 `unknown key "to" in a assert step`,
	"bare-number-delay.yaml":              "found the bare number 100",
	"bare-number-timeout.yaml":            "found the bare number 30",
	"baud-string.yaml":                    "baud must be a whole number",
	"baud-too-low.yaml":                   "baud must be a whole number from 50",
	"capture-bare-number.yaml":            "found the bare number 2",
	"capture-no-end.yaml":                 "capture needs something that ends it",
	"capture-save-list.yaml":              "save on a capture names one variable",
	"capture-start.yaml":                  "start must be one of immediate, first_byte",
	"data-bits.yaml":                      "data_bits must be a whole number from 5 to 8",
	"delay-and-delay-ms.yaml":             "has both delay and delay_ms",
	"delay-ms-string.yaml":                "delay_ms must be a number",
	"device-line-ending.yaml":             "line_ending must be one of lf, crlf, cr, none",
	"device-name.yaml":                    `device name "my-board"`,
	"device-unknown-key.yaml":             `unknown key "speed" in device dut`,
	"devices-list.yaml":                   "devices must map device names",
	"dtr-string.yaml":                     "dtr must be true or false",
	"duration-without-unit.yaml":          `"100" is not a duration`,
	"empty-fail-on.yaml":                  "fail_on must not be an empty list",
	"empty-file.yaml":                     "the file is empty",
	"empty-pattern.yaml":                  "expect pattern must not be empty",
	"expect-any-not-list.yaml":            "any must be a list of patterns",
	"expect-bad-mapping.yaml":             "expect is a pattern, a list of alternatives, or {any: [...]}",
	"flow-control.yaml":                   "flow_control must be one of none, rtscts, xonxoff",
	"group-empty-steps.yaml":              "a group with no steps does nothing",
	"id-bad.yaml":                         `id "1st" must be a name`,
	"list.bench.yaml":                     "a bench file must be a mapping",
	"recover-without-health.bench.yaml":   "recover: needs a health: check",
	"recover-without-health.pool.yaml":    "recover: needs a health: check",
	"health-not-list.bench.yaml":          "health must be a list of steps",
	"recover-step-unknown-key.bench.yaml": `unknown key "sevirity" in a reset step`,
	"ladder-beside-bench-file.pool.yaml":  "bench file: health: goes in the bench file",
	"missing-steps.yaml":                  "the sequence has no steps",
	"negative-duration.yaml":              `"-1s" is not a duration`,
	"on-failure.yaml":                     `on_failure must be stop or continue, found "abort"`,
	"parity.bench.yaml":                   `parity must be one of none, odd, even, mark, space, found "1"`,
	"parity.yaml":                         `parity must be one of none, odd, even, mark, space, found "evn"`,
	"pattern-two-keys.yaml":               "expect is a pattern, a list of alternatives",
	"read-timeout-negative.yaml":          "read_timeout (seconds) must be a number of 0 or more",
	"read-timeout-string.yaml":            "read_timeout (seconds) must be a number of 0 or more",
	"regex-flag-string.yaml":              "regex must be true or false",
	"repeat-as-bad.yaml":                  `as: "i j" is not a variable name`,
	"repeat-unknown-key.yaml":             `unknown key "interval" in repeat`,
	"nested-pattern.yaml":                 `a pattern in expect is text, {regex: "RE2"} or {text: "literal"}`,
	"repeat-without-count-or-for.yaml":    "repeat needs a count or a for: duration",
	"repeat-without-steps.yaml":           "a repeat needs a steps: list",
	"repeat-zero.yaml":                    "repeat must be a whole number from 1 to 100000000",
	"root-scalar.yaml":                    "a sequence file must be a mapping with steps, or a list of steps",
	"save-bad-name.yaml":                  `save: "fw-version" is not a variable name`,
	"prompt-empty.yaml":                   "prompt pattern must not be empty",
	"echo-text.bench.yaml":                `echo must be true or false, found the text "sometimes"`,
	"wait-prompt-on-ctrl.yaml":            "send_ctrl never waits for the prompt",
	"until-prompt-on-delay.yaml":          `unknown key "until_prompt" in a delay step`,
	"settle-bare-number.yaml":             "settle must be a duration with a unit, like 100ms or 100s, found the bare number 100",
	"settle-on-delay.yaml":                `unknown key "settle" in a delay step`,
	"settle-text.bench.yaml":              `settle: "soon" is not a duration`,
	"buffer-unit.bench.yaml":              "buffer must be a size from 64KiB to 256MiB, such as 4MiB or 1048576 (bytes), found 4MB",
	"save-group-range.yaml":               "save group must be a whole number from 0 to 99",
	"save-without-expect.yaml":            "save needs an expect on the same step",
	"send-and-send-hex.yaml":              "has both send and send_hex",
	"send-ctrl-caret.yaml":                `send_ctrl: "^" is not a control key`,
	"send-ctrl.yaml":                      `send_ctrl: "ctrl-1" is not a control key`,
	"send-hex-empty.yaml":                 "is not hex bytes",
	"send-hex-odd.yaml":                   `send_hex "0d0" is not hex bytes`,
	"set-bad-expr-mapping.yaml":           `set x: a value is text, a number, a boolean or {expr: "..."}`,
	"set-list-value.yaml":                 "set x must be text, a number or a boolean, found a list",
	"step-line-ending.yaml":               "line_ending must be one of lf, crlf, cr, none",
	"step-not-mapping.yaml":               "a step must be a mapping",
	"step-without-kind.yaml":              "the step says nothing to do",
	"steps-not-list.yaml":                 "steps must be a list of steps, found a mapping",
	"steps-null.yaml":                     "steps must be a list of steps, found nothing (null)",
	"stop-bits.yaml":                      "stop_bits must be 1, 1.5 or 2, found 3",
	"mem-address-negative.yaml":           `address -4 is negative`,
	"mem-address-twice.yaml":              `the address is given twice: write it as the step's value or as address:, not both`,
	"mem-expect-empty-list.yaml":          `expect must not be an empty list`,
	"mem-poll-expect-list.yaml":           `mem_poll reads one value: expect one value or {mask, value}, not a list`,
	"mem-poll-until-and-expect.yaml":      `give mem_poll until: or expect:, not both`,
	"mem-save-boolean.yaml":               `save must be a variable name, found a boolean (true)`,
	"reset-false.yaml":                    `reset: write reset: run, halt or init (or true for run)`,
	"build-pio-with-dir.yaml":             `shell, dir, env and elf go with command:; PlatformIO takes its project from pio: {project_dir: ...}`,
	"upload-command-with-probe.yaml":      `probe goes with an openocd: upload`,
	"upload-openocd-with-port.yaml":       `an openocd upload writes through the probe: shell, dir, env and port go with command: or pio:`,
	"two-kinds.yaml":                      "has both send and delay",
	"unknown-key.bench.yaml":              `unknown key "ports" in the bench file`,
	"bench-and-sim.pool.yaml":             "bench a: give one of bench: FILE, an inline bench",
	"sim-and-devices.pool.yaml":           "bench a: give one of bench: FILE, an inline bench",
	"no-name.pool.yaml":                   "a bench of the pool needs a name:",
	"no-benches.pool.yaml":                "benches must be a list of benches",
	"bench-name.pool.yaml":                `bench name "a b": want letters, digits`,
	"unknown-key.pool.yaml":               `unknown key "port" in a bench of the pool`,
	"unknown-step-key.yaml":               `unknown key "expct" in a send step`,
	"unknown-step-kind.yaml":              `unknown step kind "reboot"`,
	"unknown-top-level-key.yaml":          `unknown key "nmae" in the sequence (did you mean "name"?)`,
	"usb-bad-vid.yaml":                    `usb vid must be a 4-digit hex id like "0483", found "04833"`,
	"usb-missing-pid.yaml":                "usb needs both vid and pid",
	"usb-unknown-key.yaml":                `unknown key "product" in usb`,
	"var-name.yaml":                       `variable name "2nd"`,
	"var-value-mapping.yaml":              "variable board must be text, a number or a boolean, found a mapping",
	"vars-list.yaml":                      "vars must map names to values, found a list",
	// Memory and debugger steps.
	"halt-false.yaml":                    "halt: write halt: true",
	"halt-with-address.yaml":             `unknown key "address" in a halt step`,
	"mem-address-and-symbol.yaml":        "give mem_read an address or a symbol, not both",
	"mem-address-mapping.yaml":           "address must be a number like 0x20000000 or an expression, found a mapping",
	"mem-address-template.yaml":          `expression "${base}" does not compile`,
	"mem-count-zero.yaml":                "count must be a whole number from 1 to 1048576, found 0",
	"mem-expect-mask-without-value.yaml": "expect {mask, value} needs a value",
	"mem-expect-text.yaml":               `expect "on" is not a number: expected something like 0x40, 64 or ${var}`,
	"mem-expect-unknown-key.yaml":        `unknown key "bits" in expect`,
	"mem-kind-address-and-symbol.yaml":   "give mem_write an address or a symbol, not both",
	"mem-no-address.yaml":                "mem_read needs an address (address: 0x20000000) or a symbol (symbol: counter)",
	"mem-offset-text.yaml":               `offset must be a number like 0x40 or 64, found the text "-4"`,
	"mem-poll-count.yaml":                `unknown key "count" in a mem_poll step`,
	"mem-poll-interval-number.yaml":      "interval must be a duration with a unit, like 10ms or 10s, found the bare number 10",
	"mem-poll-no-condition.yaml":         "mem_poll needs until: (an expression over value) or expect:",
	"mem-read-false.yaml":                "mem_read must be true or an address",
	"mem-read-regex.yaml":                `unknown key "regex" in a mem_read step`,
	"mem-read-verify.yaml":               `unknown key "verify" in a mem_read step`,
	"mem-save-bad-name.yaml":             `save: "gpio-odr" is not a variable name`,
	"mem-until-mapping.yaml":             "until must be text, found a mapping",
	"mem-width-text.yaml":                `width must be a whole number, found the text "32"`,
	"mem-width.yaml":                     "width must be 8, 16, 32 or 64 bits, found 12",
	"mem-write-count.yaml":               `unknown key "count" in a mem_write step`,
	"mem-write-expect.yaml":              "this one has both mem_write and expect",
	"mem-write-no-value.yaml":            "mem_write needs a value (or a list of values)",
	"mem-write-value-bool.yaml":          "value must be a number like 0x40 or 64, or text with ${var}, found a boolean (true)",
	"mem-write-value-empty-list.json":    "value must not be an empty list",
	"mem-write-value-negative.yaml":      `value "-1" is not a number: expected something like 0x40, 64 or ${var}`,
	"mem-write-value-text.yaml":          `value "hello" is not a number: expected something like 0x40, 64 or ${var}`,
	"mem-write-value-unclosed.yaml":      "value: unclosed ${",
	"openocd-fail-on.yaml":               `unknown key "fail_on" in a openocd step`,
	"openocd-step-mapping.yaml":          "openocd must be text, found a mapping",
	"reset-sideways.yaml":                `reset must be one of run, halt, init, found "sideways"`,
	"resume-text.yaml":                   `resume must be true or false, found the text "yes"`,
	// Probes.
	"launch-config-mapping.yaml":            "config must be a list of text, found a mapping",
	"launch-not-mapping.yaml":               `launch must be a mapping such as {config: [interface/stlink.cfg, target/stm32f4x.cfg]}, found the text "interface/stlink.cfg"`,
	"launch-unknown-key.yaml":               `unknown key "cfg" in launch`,
	"probe-bare-string.yaml":                `probe board must be a mapping such as {openocd: 127.0.0.1:4444} or {launch: {config: [...]}}, found the text`,
	"probe-list.bench.yaml":                 "probe yellow must be a mapping such as {openocd: 127.0.0.1:4444} or {launch: {config: [...]}}, found a list",
	"probe-name.yaml":                       `probe name "my-board" must be a name of letters, digits and underscores`,
	"probe-openocd-and-adapter-serial.yaml": "probe board: give openocd (attach to a running one) or launch, not both",
	"probe-openocd-and-launch.yaml":         "probe board: give openocd (attach to a running one) or launch, not both",
	"probe-gdb-and-openocd.yaml":            "probe board: give gdb (a GDB remote stub) or openocd/launch (OpenOCD), not both",
	"probe-gdb-and-launch.bench.yaml":       "probe board: give gdb (a GDB remote stub) or openocd/launch (OpenOCD), not both",
	"probe-gdb-not-address.yaml":            "gdb must be HOST:PORT of a GDB remote stub",
	"probe-gdb-attach.yaml":                 `attach must be one of running, halted, auto, found "stopped"`,
	"probe-qemu-no-machine.yaml":            "qemu needs machine:",
	"probe-qemu-no-image.yaml":              "qemu needs kernel: FILE",
	"probe-qemu-and-config.yaml":            "launch starts QEMU (qemu: {...}) or OpenOCD",
	"probe-qemu-unknown-key.bench.yaml":     `unknown key "serial" in qemu`,
	"probe-qemu-not-mapping.yaml":           "qemu must be a mapping",
	"monitor-step-mapping.yaml":             "monitor must be text, found a mapping",
	"monitor-unknown-key.yaml":              `unknown key "to" in a monitor step`,
	"probe-openocd-no-port.yaml":            "openocd must be HOST:PORT of a running OpenOCD's telnet server",
	"probe-step-on-send.yaml":               `unknown key "probe" in a send step`,
	"probe-unknown-key.bench.yaml":          `unknown key "serial" in probe yellow`,
	"probe-unknown-key.yaml":                `unknown key "speed" in probe board`,
	"probes-list.yaml":                      "probes must map probe names to their settings, found a list",
	// Build and upload steps.
	"build-unknown-key.yaml":        `unknown key "target" in build`,
	"pio-test-no-project.yaml":      "pio_test needs project_dir",
	"pio-test-unknown-key.yaml":     `unknown key "target" in pio_test`,
	"build-command-and-pio.yaml":    "build takes one of command: or pio:",
	"build-command-empty-list.yaml": "command must not be empty",
	"build-not-mapping.yaml":        `build must be a mapping such as {command: [make, -C, firmware]} or {pio: {project_dir: fw}}, found the text "make"`,
	"build-pio-not-mapping.yaml":    `pio must be a mapping such as {project_dir: fw, env: esp32dev}, found the text "firmware"`,
	"build-port.yaml":               `unknown key "port" in build`,
	"build-probe.yaml":              `unknown key "probe" in a build step`,
	"build-shell-two-strings.yaml":  "with shell: true, command is one string for sh -c",
	"upload-elf.yaml":               `unknown key "elf" in upload`,
	"upload-method-flash.yaml":      `method must be one of program, load, found "flash"`,
	"upload-nothing.yaml":           "upload needs command:, pio: or openocd:",
	"upload-openocd-no-file.yaml":   "openocd needs file: the image to write",
	"upload-pio-unknown-key.yaml":   `unknown key "environment" in pio`,
	// Camera captures and image checks.
	"camera-and-device-index.yaml":       "give the camera once, as camera: or device_index:",
	"camera-capture-unknown-key.yaml":    `unknown key "duration" in a camera capture`,
	"camera-entry-list.yaml":             "camera top must be an input such as /dev/video0 or a mapping such as {input: /dev/video2, size: 640x480}, found a list",
	"camera-entry-size.yaml":             `size "640" must be WIDTHxHEIGHT, like 640x480`,
	"camera-entry-unknown-key.yaml":      `unknown key "device" in camera top`,
	"camera-frames-without-capture.yaml": "frames goes with capture:; expect_image alone checks one picture",
	"camera-frames-zero.yaml":            "frames must be a whole number from 1 to 1000, found 0",
	"camera-index-too-big.yaml":          "camera must be a whole number from 0 to 255, found 256",
	"camera-label-dot.yaml":              `label ".." names picture files`,
	"camera-label-path.yaml":             `label "../x" names picture files: use letters, digits, '-', '_' and '.'`,
	"camera-name.yaml":                   `camera name "top-cam" must be a name of letters, digits and underscores`,
	"camera-size.yaml":                   `size "640*480" must be WIDTHxHEIGHT, like 640x480`,
	"camera-step-unknown-key.yaml":       `unknown key "to" in a camera step`,
	"camera-twice.yaml":                  "give the camera once, as camera: or device_index:",
	"camera-unknown-key.bench.yaml":      `unknown key "fps" in camera top`,
	"cameras-list.yaml":                  "cameras must map camera names to an input or settings, found a list",
	"capture-false.yaml":                 "capture must be true or a mapping such as {camera: board, label: led}",
	"capture-label-only.yaml":            `unknown key "label" in a capture step`,
	"device-index-text.yaml":             `device_index must be a camera number such as 0, found the text "/dev/video0"`,
	"expect-image-empty-list.yaml":       "expect_image needs at least one check",
	"expect-image-no-bound.yaml":         `expect_image needs brightness: (like ">0.6") or color: (like "#00ff00")`,
	"expect-image-not-mapping.yaml":      `expect_image must be a mapping such as {region: [10, 20, 8, 8], brightness: ">0.6"}, found the text "bright"`,
	"expect-image-unknown-key.yaml":      `unknown key "hue" in expect_image`,
	"image-brightness-empty-list.yaml":   "brightness needs at least one bound",
	"image-brightness-range.yaml":        `brightness runs from 0 (black) to 1 (white): ">1.5" is outside it`,
	"image-brightness-text.yaml":         `brightness: "bright" is not a bound`,
	"image-color-and-colour.yaml":        "give color once",
	"image-colour.yaml":                  `color: "grene" is not a colour: write #rrggbb, #rgb or one of black, white`,
	"image-region-three.yaml":            "region must be [x, y, width, height] in pixels, found a list",
	"image-region-zero-width.yaml":       "region width must be a whole number from 1 to 65535, found 0",
	"image-tolerance-without-color.yaml": "tolerance goes with color:",
	"image-tolerance-zero.yaml":          "tolerance is a colour distance above 0 and at most 1, found 0",
	// Modem lines, break and reset sequences.
	"break-zero.yaml":           "break needs a length above 0, like 250ms",
	"lines-no-line.yaml":        "lines needs dtr:, rts: or both",
	"lines-not-mapping.yaml":    `lines must be a mapping such as {dtr: true, rts: false}, found the text "dtr"`,
	"lines-string.yaml":         `dtr must be true or false, found the text "low"`,
	"lines-timeout.yaml":        `unknown key "timeout" in a lines step`,
	"lines-unknown-key.yaml":    `unknown key "rst" in lines (did you mean "rts"?)`,
	"reset-sequence-name.yaml":  `reset_sequence must be one of esp32, esp32_run, arduino, found "esp23" (did you mean "esp32"?)`,
	"reset-sequence-probe.yaml": `unknown key "probe" in a reset_sequence step`,
	// Host commands.
	"exec-empty.yaml":                   "exec needs a command: an argument vector",
	"exec-env-list.yaml":                "env must map variable names to values, found a list",
	"exec-env-name.yaml":                `env: "A=B" is not an environment variable name`,
	"exec-exit-code-empty.yaml":         "exit_code needs at least one number",
	"exec-exit-code-text.yaml":          `exit_code must be a number from 0 to 255, a list of them, or any; found the text "success"`,
	"exec-one-item-with-pipe.json":      `exec "ls|wc" is one word with spaces or shell characters`,
	"exec-one-string-with-spaces.yaml":  `exec "uhubctl -a cycle" is one word with spaces or shell characters: write an argument vector like [uhubctl, -a, cycle], or add shell: true`,
	"exec-save-two-without-expect.yaml": "without expect, save on an exec names one variable for the whole output",
	"exec-shell-list.yaml":              "with shell: true, exec is one string for sh -c",
	"exec-to.yaml":                      `unknown key "to" in a exec step`,
	// Power.
	"power-action.yaml":              `power must be one of on, off, cycle, found "reboot"`,
	"power-entry-empty-command.yaml": "on needs a command: an argument vector",
	"power-entry-name.yaml":          `power entry "my-board" must be a name of letters, digits and underscores`,
	"power-entry-no-off.yaml":        "power dut needs on: and off: commands (cycle: is optional; without it a cycle runs off, waits off_time, then on)",
	"power-entry-off-time.yaml":      "off_time must be a duration with a unit, like 2ms or 2s, found the bare number 2",
	"power-entry-shell-list.yaml":    "power dut: with shell: true each command is one string for sh -c",
	"power-entry-string.yaml":        `power dut must be a mapping such as {on: [uhubctl, -a, on, -p, "2"], off: [uhubctl, -a, off, -p, "2"]}, found the text "uhubctl -a cycle"`,
	"power-entry-unknown-key.yaml":   `unknown key "delay" in power dut`,
	"power-mapping-action.yaml":      `action must be one of on, off, cycle, found "reboot"`,
	"power-mapping-no-action.yaml":   "power needs an action: on, off or cycle",
	"power-mapping-unknown-key.yaml": `unknown key "board" in power`,
	"power-no-off.bench.yaml":        "power dut needs on: and off: commands",
	"power-section-list.yaml":        "power must map board names to {on: [...], off: [...]}, found a list",
	"power-step-to.yaml":             `unknown key "to" in a power step`,
	"read-timeout-too-long.yaml":     "read_timeout (seconds) of 1e300 is too long: the longest is 24h",
	"delay-ms-too-long.yaml":         "delay_ms of 1e20 is too long: the longest is 24h",
	// Retries, measurements, tags, matrices and secrets.
	"retries-too-many.yaml":        "2:10: retries must be a whole number from 0 to 20, found 21",
	"before-retry-not-list.yaml":   "5:19: before_retry must be a list of steps, found a mapping",
	"measure-no-name.yaml":         "3:14: measure needs a name:",
	"measure-min-text.yaml":        `3:44: measure min must be a number, found the text "low"`,
	"tag-name.yaml":                `2:8: tag "a b" must be letters, digits, _, - and .`,
	"matrix-empty-values.yaml":     "4:20: matrix key baud must have a list of one or more values, like [9600, 115200], found an empty list",
	"matrix-exclude-not-list.yaml": "6:16: matrix exclude must be a list of mappings",
	"secrets-mapping.yaml":         "2:10: secrets must be a list of names, such as [wifi_psk, api_token], found a mapping",
	"secret-name.yaml":             `2:11: secret name "wifi-psk" must be letters, digits and underscores`,
	"secret-source.bench.yaml":     `3:13: secret wifi_psk: a secret's source must be env:VARIABLE or file:PATH, found "vault:lab/wifi"`,
	"sim-and-secrets.pool.yaml":    "3:5: bench a: give one of bench: FILE, an inline bench (devices:, probes:, cameras:, power:, secrets:) or sim: true",
	// Quarantine lists.
	"no-reason.quarantine.yaml":    "2:3: the entry for flaky has no reason",
	"unknown-key.quarantine.yaml":  `4:3: unknown key "bench" in a quarantine entry: want name, reason and benches`,
	"benches-text.quarantine.yaml": "4:12: benches must be a list of bench names",
	"mapping.quarantine.yaml":      "2:1: a quarantine list must be a list of entries",
	// Parallel branches and barriers.
	"parallel-one-branch.yaml":          "a parallel needs at least two branches, found 1",
	"parallel-branch-finally-name.yaml": `branch name "finally" is kept for the finally steps of a list`,
	"barrier-with-to.yaml":              `unknown key "to" in a barrier step`,
}

// loaderOnly lists the files the schema accepts and the loader rejects: what
// the loader checks that a schema cannot, and the text its error contains.
var loaderOnly = map[string]struct{ why, loaderErr string }{
	"network-port-scheme.yaml": {
		"a port given as a URL must be tcp://HOST:PORT or rfc2217://HOST:PORT",
		`unknown scheme "telnet"`,
	},
	"duplicate-name.pool.yaml": {
		"a pool's bench names are unique",
		`bench name "a" is given twice (first at line 2)`,
	},
	"ladder-unknown-device.bench.yaml": {
		"a health check's or rung's steps name the bench's own devices",
		`to: unknown device "dutt"`,
	},
	"ladder-power-without-entry.bench.yaml": {
		"a rung's power step needs the bench's power entry for its board",
		`power: no power entry for "dut"`,
	},
	"qemu-console-unknown-device.yaml": {
		"a QEMU launch's console must name a device of the sequence",
		`qemu console: unknown device "consol"`,
	},
	"qemu-console-has-port.yaml": {
		"a QEMU launch's console device must have no port of its own, as the launch binds it",
		"qemu console: device console has a port of its own",
	},
	"undefined-variable.yaml": {
		"a ${name} reference must name a variable defined earlier in step order (vars, set, save, repeat as, --var)",
		`variable "nobody_set_me" is not defined here`,
	},
	"undefined-variable-in-expression.yaml": {
		"the same for the names an expression reads",
		`variable "retries" is not defined here`,
	},
	"buffer-too-small.yaml": {
		"a buffer is at least 64KiB; the schema only knows the form of a size",
		"buffer must be a size from 64KiB to 256MiB, such as 4MiB or 1048576 (bytes), found 4KiB",
	},
	"settle-too-long.yaml": {
		"a settle time is at most 1m; the schema only knows it is a duration",
		"settle must be at most 1m0s, found 2m0s",
	},
	"bad-regex.yaml": {
		"regular expressions must compile as RE2; the schema only knows they are text",
		"missing closing )",
	},
	"bad-expression.yaml": {
		"expressions must parse and compile with expr-lang",
		`expression "1 +* 2" does not compile`,
	},
	"bad-template.yaml": {
		"${...} references must be closed and name a variable",
		"unclosed ${",
	},
	"unknown-device.yaml": {
		"to: must name a declared device or be a port path",
		`to: unknown device "dtu"; devices are dut (did you mean "dut"?)`,
	},
	"ambiguous-device.yaml": {
		"with several devices every serial step needs to:",
		"this send step needs to: because the sequence has several devices (dut, gps)",
	},
	"duplicate-id.yaml": {
		"step ids are unique in the file",
		`id "check" is already used by the step at line 2`,
	},
	"save-group-missing.yaml": {
		"a saved group must exist in the pattern",
		"the pattern /v(\\d+)/ has 1 group(s), not 2",
	},
	"builtin-name-variable.yaml": {
		"an expression reading a variable named like an expr-lang function must write vars.NAME",
		"len is the name of an expression function",
	},
	"zero-capture-window.yaml": {
		"a capture window of 0s has nothing that ends it; the schema sees only a well-formed duration",
		"capture needs something that ends it",
	},
	"duration-overflow.yaml": {
		"durations beyond about 290 years overflow; the schema sees only a well-formed duration",
		`"9999999999h" is not a duration: it is too long to count in nanoseconds`,
	},
	"timeout-too-short.yaml": {
		"timeouts are 0 (the default) or 1ms to 24h; the schema sees only a well-formed duration",
		"timeout of 1ns is too short: the shortest is 1ms",
	},
	"delay-too-long.yaml": {
		"delays are at most 24h; the schema sees only a well-formed duration",
		"delay of 25h0m0s is too long: the longest is 24h",
	},
	"value-wider-than-width.yaml": {
		"a value must fit in the step's width; the schema does not relate the two keys",
		"value 0x1ffffffff does not fit in 32 bits",
	},
	"address-overflow.yaml": {
		"a read must not run past the end of the address space; the schema does not relate address, width and count",
		"runs past the end of the 32-bit address space",
	},
	"nested-repeats-too-many.yaml": {
		"nested repeats multiply: at most 100,000,000 steps per run; the schema cannot multiply",
		"more than the limit of 100000000 steps per run",
	},
	"stop-bits-written-as-float.yaml": {
		"the loader reads numbers as written (2.0 is not 2); the schema sees the number 2",
		"stop_bits must be 1, 1.5 or 2, found 2.0",
	},
	"baud-written-as-float.yaml": {
		"the loader wants an integer as written (115200.0 is a float); JSON Schema counts 115200.0 as an integer",
		"baud must be a whole number, found a number (115200.0)",
	},
	"merge-key.yaml": {
		"YAML merge keys (<<) are refused by the loader; a YAML parser merges them before the schema sees the data",
		"YAML merge keys (<<) are not supported",
	},
	"unknown-probe.yaml": {
		"probe: must name a declared probe when the sequence declares probes",
		`probe: unknown probe "bord"; probes are board (did you mean "board"?)`,
	},
	"ambiguous-probe.yaml": {
		"with several probes every memory and debugger step needs probe:",
		"this reset step needs probe: because the sequence has several probes (board, ref_board)",
	},
	"undefined-variable-in-address.yaml": {
		"an address expression reads variables that must be defined, as any expression",
		`variable "gpio_base" is not defined here`,
	},
	"bad-address-expression.yaml": {
		"an address that is not a number is an expression, which must compile; the schema only knows it is text",
		`expression "0x20000000 +" does not compile`,
	},
	"bad-until-expression.yaml": {
		"a mem_poll's until must compile as an expression",
		`expression "value >" does not compile`,
	},
	"undefined-variable-in-value.yaml": {
		"a mem_write value's ${name} must name a variable defined earlier",
		`variable "led_mask" is not defined here`,
	},
	"bad-openocd-regex.yaml": {
		"an openocd step's expect compiles as RE2 like a serial one",
		"missing closing )",
	},
	"undefined-variable-in-openocd.yaml": {
		"so must an openocd command's",
		`variable "addr" is not defined here`,
	},
	"upload-unknown-port-device.yaml": {
		"an upload's port: must name a declared device or be a port path; the schema only knows it is text",
		`port: unknown device "dtu" (did you mean "dut"?)`,
	},
	"unknown-camera.yaml": {
		"a step's camera: must name a declared camera or be a number, a device path or a URL; the schema only knows it is text",
		`camera: unknown camera "tpo"; cameras are top (did you mean "top"?)`,
	},
	"ambiguous-camera.yaml": {
		"with several cameras every camera step needs camera:",
		"this step needs camera: because the sequence has several cameras (top, side)",
	},
	"break-too-long.yaml": {
		"a break is at most 10s (it cannot be interrupted); the schema does not compare durations",
		"break of 1m0.5s is longer than 10s",
	},
	"parallel-shared-device.yaml": {
		"a device belongs to one branch of a parallel: step; the schema cannot follow devices across branches",
		"device dut is used by branch x (line 5) and by branch y",
	},
	"barrier-one-branch.yaml": {
		"a barrier must be named by two branches at least; the schema cannot compare branches",
		"barrier go is named only by branch x",
	},
	"parallel-retries-in-branch.yaml": {
		"retries: is refused inside a branch; the schema does not know where a group stands",
		"retries: is refused inside branch x of a parallel",
	},
	"undefined-variable-in-exec.yaml": {
		"an exec argument's ${name} must name a variable defined earlier",
		`variable "hub_port" is not defined here`,
	},
	"secret-in-expression.yaml": {
		"a secret can only be sent; the schema cannot tell an expression's names",
		"4:13: secret wifi_psk can only be sent",
	},
	"secret-named-variable.yaml": {
		"a variable may not have a secret's name; the schema does not relate vars: and secrets:",
		"3:8: variable wifi_psk has the name of a secret",
	},
	"matrix-key-is-variable.yaml": {
		"a matrix key may not also be a variable under vars:; the schema does not relate the two",
		"5:14: matrix key baud is also a variable under vars: (line 2)",
	},
	"bad-glob.quarantine.yaml": {
		"a quarantine entry's name must be a valid glob; the schema only knows it is text",
		`2:9: name "[" is not a valid glob`,
	},
	"retries-in-repeat.yaml": {
		"retries: is refused inside a repeat; the schema does not know where a group is nested",
		"11:22: retries: is refused inside a repeat",
	},
}

// schemaOnly lists the files the loader accepts and the schema rejects: the
// loader is more lenient there. If the loader is tightened, move the file to
// bad/.
var schemaOnly = map[string]string{
	"send-hex-unquoted-number.yaml":        "the loader reads an unquoted number as its digits (send_hex: 1234 sends 12 34); the schema wants text, as YAML's number could be written many ways",
	"usb-id-unquoted-hex-number.yaml":      "the loader reads vid: 0xFFFF as written; the schema sees 65535 and allows unquoted ids of 4 decimal digits only",
	"schema-key-not-text.yaml":             "the loader ignores $schema whatever its value; the schema wants a string",
	"mem-offset-with-address.yaml":         "the loader accepts offset with an address, which the runner ignores (it applies offset to symbols only); the schema wants a symbol with offset",
	"probe-adapter-serial-and-launch.yaml": "the loader accepts adapter_serial beside launch, and launch then drops it when it comes after; the schema wants adapter_serial inside launch",
	"colour-name-capitalised.yaml":         "the loader reads colour names in any case (Green); the schema lists them in lower case, as editors offer them",
}

// schemas holds the compiled sequence, bench, pool and quarantine
// schemas.
type schemas struct {
	sequence, bench, pool, quarantine *jsonschema.Schema
}

func compileSchemas(t *testing.T) *schemas {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	var ids []string
	for _, src := range []struct {
		name string
		data []byte
	}{
		{sequenceSchemaFile, SequenceSchema},
		{benchSchemaFile, readFile(t, benchSchemaFile)},
		{poolSchemaFile, readFile(t, poolSchemaFile)},
		{quarantineSchemaFile, readFile(t, quarantineSchemaFile)},
	} {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(src.data))
		if err != nil {
			t.Fatalf("%s: %v", src.name, err)
		}
		id, _ := doc.(map[string]any)["$id"].(string)
		if id == "" {
			t.Fatalf("%s has no $id", src.name)
		}
		if err := c.AddResource(id, doc); err != nil {
			t.Fatalf("%s: %v", src.name, err)
		}
		ids = append(ids, id)
	}
	var out [4]*jsonschema.Schema
	for i, id := range ids {
		s, err := c.Compile(id)
		if err != nil {
			t.Fatalf("compile %s: %v", id, err)
		}
		out[i] = s
	}
	return &schemas{sequence: out[0], bench: out[1], pool: out[2], quarantine: out[3]}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// isPool: a file named *.pool.yaml is a pool file, checked against
// pool.schema.json and loaded with steps.LoadPool.
func isPool(path string) bool { return strings.HasSuffix(filepath.Base(path), ".pool.yaml") }

// isQuarantine: quarantine.yaml or *.quarantine.yaml is a quarantine
// list, checked against quarantine.schema.json and loaded with
// selectx.LoadQuarantine.
func isQuarantine(path string) bool {
	base := filepath.Base(path)
	return base == "quarantine.yaml" || strings.HasSuffix(base, ".quarantine.yaml")
}

func isBench(path string) bool {
	base := filepath.Base(path)
	return base == steps.BenchFile || strings.HasSuffix(base, ".bench.yaml")
}

// validate reports the schema's verdict on the file at path.
func (s *schemas) validate(path string) error {
	v, err := readInstance(path)
	if err != nil {
		return err
	}
	if isBench(path) {
		return s.bench.Validate(v)
	}
	if isPool(path) {
		return s.pool.Validate(v)
	}
	if isQuarantine(path) {
		return s.quarantine.Validate(v)
	}
	return s.sequence.Validate(v)
}

// load reports the loader's verdict on the file at path.
func load(path string) error {
	if isBench(path) {
		_, err := steps.LoadBench(files.Anywhere(), path)
		return err
	}
	if isPool(path) {
		_, err := steps.LoadPool(files.Anywhere(), path)
		return err
	}
	if isQuarantine(path) {
		_, err := selectx.LoadQuarantine(files.Anywhere(), path)
		return err
	}
	_, err := steps.Load(files.Anywhere(), path, steps.LoadOptions{})
	return err
}

// readInstance decodes a JSON or YAML file into the values the validator
// takes: JSON numbers stay json.Number, YAML mappings get string keys.
func readInstance(path string) (any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if strings.EqualFold(filepath.Ext(path), ".json") {
		return jsonschema.UnmarshalJSON(bytes.NewReader(data))
	}
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("invalid YAML: %w", err)
	}
	return fromYAML(v)
}

func fromYAML(v any) (any, error) {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			c, err := fromYAML(e)
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	case map[any]any:
		// Non-string keys (numbers, booleans) become their text, as the
		// loader reads a key as written.
		out := make(map[string]any, len(v))
		for k, e := range v {
			c, err := fromYAML(e)
			if err != nil {
				return nil, err
			}
			out[fmt.Sprint(k)] = c
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			c, err := fromYAML(e)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case float64:
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return nil, fmt.Errorf("%v is not a JSON number", v)
		}
		return v, nil
	}
	return v, nil
}

func TestSchemaFilesAreDraft2020(t *testing.T) {
	for _, tc := range []struct {
		file string
		data []byte
	}{
		{sequenceSchemaFile, SequenceSchema},
		{benchSchemaFile, readFile(t, benchSchemaFile)},
		{poolSchemaFile, readFile(t, poolSchemaFile)},
		{quarantineSchemaFile, QuarantineSchema},
	} {
		t.Run(tc.file, func(t *testing.T) {
			var doc map[string]any
			if err := json.Unmarshal(tc.data, &doc); err != nil {
				t.Fatalf("not valid JSON: %v", err)
			}
			if got := doc["$schema"]; got != draft2020 {
				t.Errorf("$schema = %v, want %s", got, draft2020)
			}
			id, _ := doc["$id"].(string)
			if !strings.HasPrefix(id, "https://") || !strings.HasSuffix(id, "/"+tc.file) {
				t.Errorf("$id = %q, want an https URL ending in /%s", id, tc.file)
			}
			if s, _ := doc["title"].(string); s == "" {
				t.Error("no title")
			}
		})
	}
	t.Run("embedded", func(t *testing.T) {
		if !bytes.Equal(SequenceSchema, readFile(t, sequenceSchemaFile)) {
			t.Error("SequenceSchema differs from " + sequenceSchemaFile)
		}
	})
	compileSchemas(t)
}

// TestSchemaDescriptions checks that every property has a description, for
// editors to show, either its own or that of the definition it refers to.
func TestSchemaDescriptions(t *testing.T) {
	for _, file := range []string{sequenceSchemaFile, benchSchemaFile, poolSchemaFile, quarantineSchemaFile} {
		t.Run(file, func(t *testing.T) {
			var doc map[string]any
			if err := json.Unmarshal(readFile(t, file), &doc); err != nil {
				t.Fatal(err)
			}
			defs, _ := doc["$defs"].(map[string]any)
			var walk func(path string, v any)
			walk = func(path string, v any) {
				switch v := v.(type) {
				case map[string]any:
					if props, ok := v["properties"].(map[string]any); ok {
						for name, p := range props {
							if !described(p, defs) {
								t.Errorf("%s/properties/%s has no description", path, name)
							}
						}
					}
					for k, e := range v {
						walk(path+"/"+k, e)
					}
				case []any:
					for i, e := range v {
						walk(fmt.Sprintf("%s/%d", path, i), e)
					}
				}
			}
			walk("#", doc)
		})
	}
}

func described(p any, defs map[string]any) bool {
	for range 10 {
		m, ok := p.(map[string]any)
		if !ok {
			return false
		}
		if d, _ := m["description"].(string); d != "" {
			return true
		}
		ref, _ := m["$ref"].(string)
		name, ok := strings.CutPrefix(ref, "#/$defs/")
		if !ok {
			return false
		}
		p = defs[name]
	}
	return false
}

// TestSchemaBenchSharesDeviceDefs: the bench schema carries its own copy of
// the device definitions, so an editor needs no second file; the copy must
// not drift.
func TestSchemaBenchSharesDeviceDefs(t *testing.T) {
	var seq, bench struct {
		Defs map[string]any `json:"$defs"`
	}
	if err := json.Unmarshal(SequenceSchema, &seq); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(readFile(t, benchSchemaFile), &bench); err != nil {
		t.Fatal(err)
	}
	if len(bench.Defs) == 0 {
		t.Fatal("the bench schema has no $defs")
	}
	for name, def := range bench.Defs {
		if !reflect.DeepEqual(def, seq.Defs[name]) {
			t.Errorf("$defs/%s differs between %s and %s", name, benchSchemaFile, sequenceSchemaFile)
		}
	}
}

// TestSchemaExamples checks every example under sequences/ with the schema
// and the loader, and that each YAML example's modeline names the right
// schema.
func TestSchemaExamples(t *testing.T) {
	s := compileSchemas(t)
	var files []string
	err := filepath.WalkDir("sequences", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch strings.ToLower(filepath.Ext(path)) {
		case ".yaml", ".yml", ".json":
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"sequences/sim/smoke.yaml",
		"sequences/sim/failfast.yaml",
		"sequences/sim/seed-serial-sequence.json",
		"sequences/sim/stream.yaml",
		"sequences/sim/memory.yaml",
		"sequences/sim/seed-memory.json",
		"sequences/sim/build-and-load.yaml",
		"sequences/boards/esp32-boot.yaml",
		"sequences/boards/stm32-nucleo.yaml",
		"sequences/boards/hilrun.bench.yaml",
	} {
		if !slices.Contains(files, filepath.FromSlash(want)) {
			t.Errorf("missing example %s", want)
		}
	}
	if _, err := os.Stat(filepath.Join("sequences", "sim", steps.BenchFile)); err == nil {
		t.Errorf("sequences/sim/%s would bind the virtual board's sequences to real ports", steps.BenchFile)
	}
	for _, path := range files {
		t.Run(filepath.ToSlash(path), func(t *testing.T) {
			if err := s.validate(path); err != nil {
				t.Errorf("schema rejects it:\n%v", err)
			}
			if err := load(path); err != nil {
				t.Errorf("loader rejects it:\n%v", err)
			}
			if filepath.Ext(path) == ".json" {
				return
			}
			want := sequenceSchemaFile
			if isBench(path) {
				want = benchSchemaFile
			}
			if isPool(path) {
				want = poolSchemaFile
			}
			if isQuarantine(path) {
				want = quarantineSchemaFile
			}
			checkModeline(t, path, want)
		})
	}
}

// checkModeline checks that the file's first line points the YAML language
// server at the schema file want, relative to the file.
func checkModeline(t *testing.T, path, want string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan()
	rel, ok := strings.CutPrefix(sc.Text(), "# yaml-language-server: $schema=")
	if !ok {
		t.Errorf("first line is %q, want # yaml-language-server: $schema=PATH", sc.Text())
		return
	}
	if got := filepath.Join(filepath.Dir(path), rel); got != filepath.FromSlash(want) {
		t.Errorf("the modeline's schema %s is %s, want %s", rel, got, want)
	}
}

// testFiles lists the files of testdata/schema/dir, failing when names does
// not list exactly them.
func testFiles(t *testing.T, dir string, names []string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join("testdata", "schema", dir))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		files = append(files, e.Name())
		if names != nil && !slices.Contains(names, e.Name()) {
			t.Errorf("testdata/schema/%s/%s is not listed in the test", dir, e.Name())
		}
	}
	for _, n := range names {
		if !slices.Contains(files, n) {
			t.Errorf("the test lists testdata/schema/%s/%s, which does not exist", dir, n)
		}
	}
	if len(files) == 0 {
		t.Fatalf("testdata/schema/%s is empty", dir)
	}
	return files
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestSchemaGood(t *testing.T) {
	s := compileSchemas(t)
	for _, name := range testFiles(t, "good", nil) {
		path := filepath.Join("testdata", "schema", "good", name)
		t.Run(name, func(t *testing.T) {
			if err := s.validate(path); err != nil {
				t.Errorf("schema rejects it:\n%v", err)
			}
			if err := load(path); err != nil {
				t.Errorf("loader rejects it:\n%v", err)
			}
		})
	}
}

func TestSchemaBad(t *testing.T) {
	s := compileSchemas(t)
	files := testFiles(t, "bad", keys(badFiles))
	if len(files) < 15 {
		t.Errorf("only %d bad files", len(files))
	}
	for _, name := range files {
		path := filepath.Join("testdata", "schema", "bad", name)
		t.Run(name, func(t *testing.T) {
			if err := s.validate(path); err == nil {
				t.Error("schema accepts it")
			} else {
				t.Logf("schema: %v", err)
			}
			err := load(path)
			switch {
			case err == nil:
				t.Error("loader accepts it")
			case !errors.As(err, new(steps.ErrorList)):
				t.Errorf("loader error %v is not an ErrorList with positions", err)
			case !strings.Contains(err.Error(), badFiles[name]):
				t.Errorf("loader error\n%v\ndoes not say %q", err, badFiles[name])
			}
		})
	}
}

func TestSchemaLoaderOnly(t *testing.T) {
	s := compileSchemas(t)
	for _, name := range testFiles(t, "loader-only", keys(loaderOnly)) {
		path := filepath.Join("testdata", "schema", "loader-only", name)
		want := loaderOnly[name]
		t.Run(name, func(t *testing.T) {
			if err := s.validate(path); err != nil {
				t.Errorf("schema rejects it, but it is listed as loader-only (%s):\n%v", want.why, err)
			}
			err := load(path)
			switch {
			case err == nil:
				t.Errorf("loader accepts it; it should not: %s", want.why)
			case !strings.Contains(err.Error(), want.loaderErr):
				t.Errorf("loader error\n%v\ndoes not say %q", err, want.loaderErr)
			}
		})
	}
}

func TestSchemaStricterThanLoader(t *testing.T) {
	s := compileSchemas(t)
	for _, name := range testFiles(t, "schema-only", keys(schemaOnly)) {
		path := filepath.Join("testdata", "schema", "schema-only", name)
		t.Run(name, func(t *testing.T) {
			if err := s.validate(path); err == nil {
				t.Errorf("schema accepts it, but it is listed as schema-only: %s", schemaOnly[name])
			} else {
				t.Logf("schema: %v", err)
			}
			if err := load(path); err != nil {
				t.Errorf("loader rejects it; move it to bad/ and drop it from schemaOnly:\n%v", err)
			}
		})
	}
}
