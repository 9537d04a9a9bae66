package build

import (
	"testing"
)

func TestClassify(t *testing.T) {
	const ld = "/usr/lib/gcc/arm-none-eabi/12.2.1/../../../arm-none-eabi/bin/ld: "
	const xld = "/home/hilrun/.platformio/packages/toolchain-xtensa-esp32/bin/../lib/gcc/xtensa-esp32-elf/8.4.0/../../../../xtensa-esp32-elf/bin/ld: "
	tests := []struct {
		name    string
		output  string
		class   Class
		diag    Diagnostic
		summary string
	}{
		{
			name: "gcc missing header",
			output: "broken/missing_header.c:6:10: fatal error: hilrun_missing.h: No such file or directory\n" +
				"    6 | #include \"hilrun_missing.h\"\n" +
				"compilation terminated.\n" +
				"make: *** [Makefile:78: broken-missing-header] Error 1\n",
			class:   MissingHeader,
			diag:    Diagnostic{File: "broken/missing_header.c", Line: 6, Column: 10, Message: "fatal error: hilrun_missing.h: No such file or directory"},
			summary: "missing header hilrun_missing.h (broken/missing_header.c:6:10)",
		},
		{
			name:    "clang missing header",
			output:  "src/main.c:3:10: fatal error: 'sensor.h' file not found\n",
			class:   MissingHeader,
			diag:    Diagnostic{File: "src/main.c", Line: 3, Column: 10, Message: "fatal error: 'sensor.h' file not found"},
			summary: "missing header sensor.h (src/main.c:3:10)",
		},
		{
			name: "ld undefined reference with line",
			output: ld + "build/broken/undefined.o: in function `undefined_report':\n" +
				"./broken/undefined.c:12: undefined reference to `hilrun_undefined_function'\n" +
				"collect2: error: ld returned 1 exit status\n",
			class:   UndefinedReference,
			diag:    Diagnostic{File: "./broken/undefined.c", Line: 12, Message: "undefined reference to `hilrun_undefined_function'"},
			summary: "./broken/undefined.c:12: undefined reference to `hilrun_undefined_function'",
		},
		{
			name:    "ld undefined reference without debug info",
			output:  ld + "main.o:(.text.main+0x8): undefined reference to `sensor_read'\ncollect2: error: ld returned 1 exit status\n",
			class:   UndefinedReference,
			diag:    Diagnostic{Message: "main.o:(.text.main+0x8): undefined reference to `sensor_read'"},
			summary: "main.o:(.text.main+0x8): undefined reference to `sensor_read'",
		},
		{
			name: "ld region overflow",
			output: ld + "address 0x20010410 of build/broken/overflow.elf section `.bss' is not within region `RAM'\n" +
				ld + "build/broken/overflow.elf section `.noinit' will not fit in region `RAM'\n" +
				ld + "region `RAM' overflowed by 3120 bytes\n" +
				"collect2: error: ld returned 1 exit status\n",
			class:   MemoryOverflow,
			diag:    Diagnostic{Message: "region `RAM' overflowed by 3120 bytes"},
			summary: "region `RAM' overflowed by 3120 bytes",
		},
		{
			name: "esp32 dram overflow",
			output: xld + ".pio/build/esp32dev/firmware.elf section `.dram0.bss' will not fit in region `dram0_0_seg'\n" +
				xld + "DRAM segment data does not fit.\n" +
				xld + "region `dram0_0_seg' overflowed by 123 bytes\n" +
				"*** [.pio/build/esp32dev/firmware.elf] Error 1\n",
			class:   MemoryOverflow,
			diag:    Diagnostic{Message: "region `dram0_0_seg' overflowed by 123 bytes"},
			summary: "region `dram0_0_seg' overflowed by 123 bytes",
		},
		{
			name:    "section will not fit alone",
			output:  xld + ".pio/build/esp32dev/firmware.elf section `.dram0.bss' will not fit in region `dram0_0_seg'\n",
			class:   MemoryOverflow,
			diag:    Diagnostic{Message: ".pio/build/esp32dev/firmware.elf section `.dram0.bss' will not fit in region `dram0_0_seg'"},
			summary: ".pio/build/esp32dev/firmware.elf section `.dram0.bss' will not fit in region `dram0_0_seg'",
		},
		{
			name:    "platformio program size check",
			output:  "Checking size .pio/build/uno/firmware.elf\nError: The program size (40112 bytes) is greater than maximum allowed (32256 bytes)\n*** [checkprogsize] Explicit exit, status 1\n",
			class:   MemoryOverflow,
			diag:    Diagnostic{Message: "Error: The program size (40112 bytes) is greater than maximum allowed (32256 bytes)"},
			summary: "Error: The program size (40112 bytes) is greater than maximum allowed (32256 bytes)",
		},
		{
			name: "gcc syntax error",
			output: "src/main.c: In function 'main':\n" +
				"src/main.c:42:18: error: expected ';' before 'return'\n" +
				"src/main.c:50:1: error: expected declaration or statement at end of input\n",
			class:   SyntaxError,
			diag:    Diagnostic{File: "src/main.c", Line: 42, Column: 18, Message: "error: expected ';' before 'return'"},
			summary: "src/main.c:42:18: error: expected ';' before 'return'",
		},
		{
			name:    "first compile error wins",
			output:  "src/a.c:1:1: error: unknown type name 'foo'\nsrc/b.c:2:10: fatal error: x.h: No such file or directory\n",
			class:   SyntaxError,
			diag:    Diagnostic{File: "src/a.c", Line: 1, Column: 1, Message: "error: unknown type name 'foo'"},
			summary: "src/a.c:1:1: error: unknown type name 'foo'",
		},
		{
			name:    "warnings are not errors",
			output:  "src/a.c:1:5: warning: unused variable 'x' [-Wunused-variable]\nsrc/a.c:9:3: error: 'y' undeclared (first use in this function)\n",
			class:   SyntaxError,
			diag:    Diagnostic{File: "src/a.c", Line: 9, Column: 3, Message: "error: 'y' undeclared (first use in this function)"},
			summary: "src/a.c:9:3: error: 'y' undeclared (first use in this function)",
		},
		{
			name:    "platformio package not found",
			output:  "Platform Manager: Installing platformio/espressif32 @ 99.0.0\nError: Could not find the package with 'platformio/espressif32 @ 99.0.0' requirements for your system 'linux_x86_64'\n",
			class:   MissingPackage,
			diag:    Diagnostic{Message: "Error: Could not find the package with 'platformio/espressif32 @ 99.0.0' requirements for your system 'linux_x86_64'"},
			summary: "Error: Could not find the package with 'platformio/espressif32 @ 99.0.0' requirements for your system 'linux_x86_64'",
		},
		{
			name:    "pyserial port busy",
			output:  "could not open port '/dev/ttyUSB0': [Errno 16] Device or resource busy: '/dev/ttyUSB0'\n*** [upload] Error 1\n",
			class:   PortBusy,
			diag:    Diagnostic{Message: "could not open port '/dev/ttyUSB0': [Errno 16] Device or resource busy: '/dev/ttyUSB0'"},
			summary: "could not open port '/dev/ttyUSB0': [Errno 16] Device or resource busy: '/dev/ttyUSB0'",
		},
		{
			name: "esptool port busy",
			output: "A fatal error occurred: Could not open /dev/ttyUSB0, the port is busy or doesn't exist.\n" +
				"([Errno 16] could not open port /dev/ttyUSB0: [Errno 16] Device or resource busy: '/dev/ttyUSB0')\n" +
				"*** [upload] Error 2\n",
			class:   PortBusy,
			diag:    Diagnostic{Message: "([Errno 16] could not open port /dev/ttyUSB0: [Errno 16] Device or resource busy: '/dev/ttyUSB0')"},
			summary: "([Errno 16] could not open port /dev/ttyUSB0: [Errno 16] Device or resource busy: '/dev/ttyUSB0')",
		},
		{
			name: "esptool port missing",
			output: "A fatal error occurred: Could not open /dev/ttyUSB9, the port is busy or doesn't exist.\n" +
				"([Errno 2] could not open port /dev/ttyUSB9: [Errno 2] No such file or directory: '/dev/ttyUSB9')\n",
			class:   PortNotFound,
			diag:    Diagnostic{Message: "([Errno 2] could not open port /dev/ttyUSB9: [Errno 2] No such file or directory: '/dev/ttyUSB9')"},
			summary: "([Errno 2] could not open port /dev/ttyUSB9: [Errno 2] No such file or directory: '/dev/ttyUSB9')",
		},
		{
			name:    "platformio upload port unset",
			output:  "Looking for upload port...\nError: Please specify `upload_port` for environment or use global `--upload-port` option.\n*** [upload] Explicit exit, status 1\n",
			class:   PortNotFound,
			diag:    Diagnostic{Message: "Error: Please specify `upload_port` for environment or use global `--upload-port` option."},
			summary: "Error: Please specify `upload_port` for environment or use global `--upload-port` option.",
		},
		{
			name:    "avrdude port missing",
			output:  "avrdude: ser_open(): can't open device \"/dev/ttyACM0\": No such file or directory\n",
			class:   PortNotFound,
			diag:    Diagnostic{Message: "avrdude: ser_open(): can't open device \"/dev/ttyACM0\": No such file or directory"},
			summary: "avrdude: ser_open(): can't open device \"/dev/ttyACM0\": No such file or directory",
		},
		{
			name:    "esptool cannot connect",
			output:  "Connecting......................................\n\nA fatal error occurred: Failed to connect to ESP32: No serial data received.\n*** [upload] Error 2\n",
			class:   UploadFailed,
			diag:    Diagnostic{Message: "A fatal error occurred: Failed to connect to ESP32: No serial data received."},
			summary: "A fatal error occurred: Failed to connect to ESP32: No serial data received.",
		},
		{
			name:    "avrdude programmer silent",
			output:  "avrdude: stk500_recv(): programmer is not responding\navrdude: stk500_getsync() attempt 1 of 10: not in sync: resp=0x00\n",
			class:   UploadFailed,
			diag:    Diagnostic{Message: "avrdude: stk500_recv(): programmer is not responding"},
			summary: "avrdude: stk500_recv(): programmer is not responding",
		},
		{
			name:    "openocd cannot reach target",
			output:  "Error: init mode failed (unable to connect to the target)\n*** [upload] Error 1\n",
			class:   UploadFailed,
			diag:    Diagnostic{Message: "Error: init mode failed (unable to connect to the target)"},
			summary: "Error: init mode failed (unable to connect to the target)",
		},
		{
			name:    "scons target only",
			output:  "Compiling .pio/build/esp32dev/src/main.cpp.o\n*** [.pio/build/esp32dev/src/main.cpp.o] Error 1\n",
			class:   Unknown,
			summary: "*** [.pio/build/esp32dev/src/main.cpp.o] Error 1",
		},
		{
			name:    "make no rule",
			output:  "make: *** No rule to make target 'flash'.  Stop.\n",
			class:   Unknown,
			summary: "make: *** No rule to make target 'flash'. Stop.",
		},
		{
			name:    "error line preferred to make's",
			output:  "ld: error: multiple definition of `main'\nmake: *** [Makefile:9: fw.elf] Error 1\n",
			class:   Unknown,
			summary: "error: multiple definition of `main'",
		},
		{
			name:    "nothing to go on",
			output:  "building\n",
			class:   Unknown,
			summary: "",
		},
		{
			name:    "crlf output",
			output:  "src\\main.c:6:10: fatal error: a.h: No such file or directory\r\n",
			class:   MissingHeader,
			diag:    Diagnostic{File: "src\\main.c", Line: 6, Column: 10, Message: "fatal error: a.h: No such file or directory"},
			summary: "missing header a.h (src\\main.c:6:10)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			class, diag, summary := Classify(tt.output)
			if class != tt.class {
				t.Errorf("class = %q, want %q", class, tt.class)
			}
			if diag != tt.diag {
				t.Errorf("diagnostic = %+v, want %+v", diag, tt.diag)
			}
			if summary != tt.summary {
				t.Errorf("summary = %q, want %q", summary, tt.summary)
			}
		})
	}
}

func TestClassifyBoundsSummary(t *testing.T) {
	long := "src/t.cpp:1:1: error: " + string(make([]byte, 1000)) + "\n"
	_, _, summary := Classify(long)
	if len(summary) > maxSummary {
		t.Errorf("summary is %d bytes, want at most %d", len(summary), maxSummary)
	}
}

func TestDiagnosticString(t *testing.T) {
	tests := []struct {
		name string
		d    Diagnostic
		want string
	}{
		{"full", Diagnostic{File: "a.c", Line: 6, Column: 10, Message: "m"}, "a.c:6:10: m"},
		{"no column", Diagnostic{File: "a.c", Line: 6, Message: "m"}, "a.c:6: m"},
		{"file only", Diagnostic{File: "a.c", Message: "m"}, "a.c: m"},
		{"message only", Diagnostic{Message: "m"}, "m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.d.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}
