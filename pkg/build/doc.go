// Package build runs firmware builds for hilrun's build and upload steps
// and describes the outcome compactly: whether it worked, how much flash
// and RAM the image takes, and, when it failed, why, in one line.
//
//	res, err := build.Command(ctx, build.CommandSpec{
//		Command: []string{"make", "-C", "firmware/sim", "broken-missing-header"},
//	}, build.Options{LogFile: "logs/build.log"})
//	// err == nil: make ran; the firmware is at fault.
//	// res.OK == false, res.Class == build.MissingHeader
//	// res.Summary == "missing header hilrun_missing.h (broken/missing_header.c:6:10)"
//	// res.Diagnostic: broken/missing_header.c:6:10: fatal error: hilrun_missing.h: No such file or directory
//
// A command runs from an argument vector, without a shell unless its spec
// asks for one, in a process group of its own that is killed as a whole
// when the context ends. Its output streams through Options.Progress and
// into Options.LogFile; the Result keeps a bounded tail. Failures are
// classified from the output (see Class and Classify); sizes come from an
// ELF file (ELFSizes), from GNU size's table or from PlatformIO's RAM and
// Flash summary in the output (ParseSizes). Package pio drives PlatformIO
// Core on top of this.
package build
