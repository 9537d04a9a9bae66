package build

import (
	"fmt"
	"time"
)

// Result is what a build, upload or clean did. A command that ran and
// failed is a Result with OK false; the error return of Command is kept
// for a command that could not run at all.
type Result struct {
	OK bool `json:"ok"`
	// Class says why the command failed; None when OK.
	Class Class `json:"class"`
	// Summary is one line: the deciding error on failure, the memory use
	// (when known) on success.
	Summary string `json:"summary"`
	// Diagnostic is the compiler or linker message that decided Class;
	// zero when OK or when no line explained the failure.
	Diagnostic Diagnostic `json:"diagnostic"`
	// Tail is the end of the output, bounded by Options.TailLines and
	// Options.TailBytes; the whole output is in LogFile when one was given.
	Tail string `json:"tail"`
	// Duration is from start to exit, on the clock of Options.Now.
	Duration time.Duration `json:"duration_ns"`
	// Command is the argument vector that ran (sh -c and the script for a
	// shell command).
	Command []string `json:"command"`
	// ExitCode is the command's exit status (128+N after signal N).
	ExitCode int `json:"exit_code"`
	// Sizes is the image's memory use, nil when neither the output nor an
	// ELF file told.
	Sizes *Sizes `json:"sizes,omitempty"`
	// LogFile is where the whole output was written, "" if nowhere.
	LogFile string `json:"log_file,omitempty"`
}

// Data is the result as step data for hilrun's runner and its
// expressions: ok, class, summary, exit_code, command, duration_ms, tail,
// log_file, diagnostic (a map of file, line, column and message), and,
// when sizes are known, text, data, bss, flash_bytes, ram_bytes and elf,
// plus flash_total, flash_percent, ram_total and ram_percent when the
// board's capacities are known.
func (r *Result) Data() map[string]any {
	cmd := make([]any, len(r.Command))
	for i, a := range r.Command {
		cmd[i] = a
	}
	d := map[string]any{
		"ok":          r.OK,
		"class":       string(r.Class),
		"summary":     r.Summary,
		"exit_code":   r.ExitCode,
		"command":     cmd,
		"duration_ms": float64(r.Duration.Microseconds()) / 1000,
		"tail":        r.Tail,
		"diagnostic": map[string]any{
			"file":    r.Diagnostic.File,
			"line":    r.Diagnostic.Line,
			"column":  r.Diagnostic.Column,
			"message": r.Diagnostic.Message,
		},
	}
	if r.LogFile != "" {
		d["log_file"] = r.LogFile
	}
	if s := r.Sizes; s != nil {
		d["text"] = int(s.Text)
		d["data"] = int(s.Data)
		d["bss"] = int(s.BSS)
		d["flash_bytes"] = int(s.FlashBytes)
		d["ram_bytes"] = int(s.RAMBytes)
		if s.ELF != "" {
			d["elf"] = s.ELF
		}
		if s.FlashTotal > 0 {
			d["flash_total"] = int(s.FlashTotal)
			d["flash_percent"] = s.FlashPercent
		}
		if s.RAMTotal > 0 {
			d["ram_total"] = int(s.RAMTotal)
			d["ram_percent"] = s.RAMPercent
		}
	}
	return d
}

// sizeSummary describes memory use in one line:
// "flash 564 bytes, ram 2096 bytes" or, with capacities,
// "flash 329301/1310720 bytes (25.1%), ram 21312/327680 bytes (6.5%)".
func sizeSummary(s *Sizes) string {
	if s == nil {
		return ""
	}
	one := func(name string, used, total uint64, pct float64) string {
		if total == 0 {
			return fmt.Sprintf("%s %d bytes", name, used)
		}
		return fmt.Sprintf("%s %d/%d bytes (%.1f%%)", name, used, total, pct)
	}
	return one("flash", s.FlashBytes, s.FlashTotal, s.FlashPercent) + ", " +
		one("ram", s.RAMBytes, s.RAMTotal, s.RAMPercent)
}
