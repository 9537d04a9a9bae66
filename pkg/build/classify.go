package build

import (
	"regexp"
	"strconv"
	"strings"
)

// Class names why a build or upload failed, as far as its output tells.
// The zero value, None, belongs to a result that succeeded.
type Class string

// Failure classes. The compile and link classes (MissingHeader,
// UndefinedReference, MemoryOverflow, SyntaxError) put the firmware at
// fault; MissingPackage, PortBusy, PortNotFound and UploadFailed put the
// bench at fault (a tool, a cable, a port held by another program).
const (
	None Class = ""
	// MissingHeader: an #include names a header the compiler cannot find.
	MissingHeader Class = "MissingHeader"
	// UndefinedReference: the linker found no definition of a symbol.
	UndefinedReference Class = "UndefinedReference"
	// MemoryOverflow: a memory region (RAM, FLASH, dram0_0_seg) overflowed,
	// or PlatformIO found the program or data larger than the board allows.
	MemoryOverflow Class = "MemoryOverflow"
	// SyntaxError: any other compiler error with a source position.
	SyntaxError Class = "SyntaxError"
	// MissingPackage: PlatformIO could not find or install a platform,
	// toolchain or tool package.
	MissingPackage Class = "MissingPackage"
	// PortBusy: the upload port is held by another process.
	PortBusy Class = "PortBusy"
	// PortNotFound: no upload port was given or found, or it does not exist.
	PortNotFound Class = "PortNotFound"
	// UploadFailed: the probe or the bootloader did not answer.
	UploadFailed Class = "UploadFailed"
	// Unknown: the command failed and no pattern explained why.
	Unknown Class = "Unknown"
)

// Diagnostic is one compiler or linker message with its source position.
// Line and Column are 1-based; 0 means the tool did not say (the linker
// gives lines but no columns; a region overflow gives neither).
type Diagnostic struct {
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Message string `json:"message,omitempty"`
}

// Position is "file:line:col", "file:line" or "file", or "" without a file.
func (d Diagnostic) Position() string {
	switch {
	case d.File == "":
		return ""
	case d.Line == 0:
		return d.File
	case d.Column == 0:
		return d.File + ":" + strconv.Itoa(d.Line)
	}
	return d.File + ":" + strconv.Itoa(d.Line) + ":" + strconv.Itoa(d.Column)
}

// String is the diagnostic as a compiler prints it: "file:line:col: message".
func (d Diagnostic) String() string {
	if p := d.Position(); p != "" {
		return p + ": " + d.Message
	}
	return d.Message
}

// rule maps a line of output to a class. A stronger rank beats a weaker one
// whatever the order; among equals the first line wins, because later
// errors are usually consequences of the first.
type rule struct {
	class Class
	rank  int
	re    *regexp.Regexp
}

const (
	rankHint     = 1 // upload trouble, or a line that only narrows it down
	rankBench    = 2 // a port or package: the bench's state
	rankCompile  = 3 // the compiler or linker rejected the firmware
	rankOverflow = 4 // the linker's "overflowed by N bytes" says it all
)

// rules are tried in order on each line; the first that matches classifies
// it. Busy is tried before not-found because esptool prints "busy or
// doesn't exist" whichever it was, with the errno after.
var rules = []rule{
	{MemoryOverflow, rankOverflow, regexp.MustCompile("region [`'][^`']+' overflowed by \\d+ bytes")},
	{MemoryOverflow, rankCompile, regexp.MustCompile("will not fit in region [`']|is not within region [`']|segment data does not fit|The (program|data) size \\(\\d+ bytes\\) is greater than maximum allowed")},
	{MissingHeader, rankCompile, regexp.MustCompile(`fatal error: .+: No such file or directory|fatal error: '.+' file not found`)},
	{UndefinedReference, rankCompile, regexp.MustCompile("undefined reference to [`']|undefined symbol: ")},
	{SyntaxError, rankCompile, regexp.MustCompile(`^(.+?):(\d+):(\d+): (fatal )?error: `)},
	{MissingPackage, rankBench, regexp.MustCompile(`Could not find the package with|Unknown development platform|UnknownPackageError|PackageException|Could not install the package`)},
	{PortBusy, rankBench, regexp.MustCompile(`\[Errno 16\]|Device or resource busy|Resource busy|Access is denied|PermissionError\(13`)},
	{PortNotFound, rankBench, regexp.MustCompile("Please specify [`']?upload_port|\\[Errno 2\\]|the port doesn't exist|could not open port .*No such file|can't open device .*No such file|No such file or directory: '/dev/|Upload port not found|No serial ports found")},
	{UploadFailed, rankHint, regexp.MustCompile(`Failed to connect to|A fatal error occurred|Timed out waiting for packet|programmer is not responding|not in sync|unable to connect to the target|init mode failed|No ST-LINK detected|Error: open failed|No DFU capable USB device|J-Link connection not established|No J-Link found|Could not open .+, the port is busy|Uploading stopped|^\*\*\* \[upload\] `)},
}

var (
	// compilerDiag is GCC's and Clang's "file:line:col: error: message".
	compilerDiag = regexp.MustCompile(`^(.+?):(\d+):(\d+): (?:fatal error|error): (.*)$`)
	// linkerLineDiag is ld's "file:line: message" from debug info.
	linkerLineDiag = regexp.MustCompile(`^(.+?):(\d+): (undefined reference to .*|multiple definition of .*)$`)
	// linkerPrefix is the linker's path ahead of its message; it depends on
	// where the toolchain is installed, so messages drop it.
	linkerPrefix = regexp.MustCompile(`^.*?\bld(?:\.exe)?: `)
	// missingHeader extracts the header's name for the summary.
	missingHeader = regexp.MustCompile(`fatal error: '?([^':]+)'?(?::| file not found)`)
	// errorish picks a summary line when no rule matched.
	errorish = regexp.MustCompile(`(?i)\berror\b|failed|fatal|multiple definition`)
)

// classifier reads output a line at a time and remembers what decides the
// class, so output of any length classifies in bounded memory.
type classifier struct {
	class      Class
	rank       int
	line       string     // the line that decided the class
	diag       Diagnostic // position carried by the deciding line, if any
	firstDiag  Diagnostic // first compiler error with a position
	firstError string     // first error-looking line, for Unknown
	lastStar   string     // last make or SCons "*** [target] Error N"
}

func (c *classifier) feed(line string) {
	line = strings.TrimRight(line, " \t\r")
	if line == "" {
		return
	}
	d, hasPos := parseDiagnostic(line)
	if hasPos && c.firstDiag.File == "" {
		c.firstDiag = d
	}
	for _, r := range rules {
		if !r.re.MatchString(line) {
			continue
		}
		if r.rank > c.rank {
			c.class, c.rank, c.line = r.class, r.rank, line
			c.diag = Diagnostic{}
			if hasPos {
				c.diag = d
			}
		}
		return
	}
	switch {
	case strings.Contains(line, "*** "):
		c.lastStar = line
	case c.firstError == "" && errorish.MatchString(line):
		c.firstError = line
	}
}

// result gives the class, the diagnostic and a one-line summary.
func (c *classifier) result() (Class, Diagnostic, string) {
	if c.class == None {
		line := c.firstError
		if line == "" {
			line = c.lastStar
		}
		return Unknown, c.firstDiag, oneLine(cleanMessage(line))
	}
	diag := c.diag
	if diag.File == "" {
		if c.rank == rankCompile && c.firstDiag.File != "" && c.class != MemoryOverflow {
			diag = c.firstDiag
		} else {
			diag = Diagnostic{Message: cleanMessage(c.line)}
		}
	}
	summary := diag.String()
	if c.class == MissingHeader {
		if m := missingHeader.FindStringSubmatch(diag.Message); m != nil {
			summary = "missing header " + m[1]
			if p := diag.Position(); p != "" {
				summary += " (" + p + ")"
			}
		}
	}
	return c.class, diag, oneLine(summary)
}

// parseDiagnostic reads a compiler or linker message with a position.
func parseDiagnostic(line string) (Diagnostic, bool) {
	if m := compilerDiag.FindStringSubmatch(line); m != nil {
		ln, _ := strconv.Atoi(m[2])
		col, _ := strconv.Atoi(m[3])
		msg := strings.TrimPrefix(line[len(m[1])+len(m[2])+len(m[3])+4:], " ")
		return Diagnostic{File: m[1], Line: ln, Column: col, Message: msg}, true
	}
	if m := linkerLineDiag.FindStringSubmatch(line); m != nil {
		ln, _ := strconv.Atoi(m[2])
		return Diagnostic{File: m[1], Line: ln, Message: m[3]}, true
	}
	return Diagnostic{}, false
}

// cleanMessage drops the linker's installation path from a line.
func cleanMessage(line string) string {
	if loc := linkerPrefix.FindStringIndex(line); loc != nil {
		return strings.TrimSpace(line[loc[1]:])
	}
	return strings.TrimSpace(line)
}

// maxSummary bounds a summary; compiler messages about templates can run
// to kilobytes.
const maxSummary = 240

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > maxSummary {
		s = s[:maxSummary-3] + "..."
	}
	return s
}

// Classify explains a failed command from its output (stdout and stderr
// together): the class, the first compiler diagnostic that decided it
// (File empty when the deciding line has no position, Message then holding
// the line), and a one-line summary. Output that matches no pattern is
// Unknown, with the first error-looking line as summary (make's or SCons's
// "*** [target] Error N" only when there is no other), or "" if none.
func Classify(output string) (Class, Diagnostic, string) {
	var c classifier
	for line := range strings.Lines(output) {
		c.feed(strings.TrimSuffix(line, "\n"))
	}
	return c.result()
}
