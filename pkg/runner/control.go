package runner

import "time"

// This file holds the limits of the bench-control steps: camera
// captures and image checks, and host commands.

// Defaults for steps that give no timeout.
const (
	defaultCameraTimeout = 30 * time.Second
	defaultExecTimeout   = 60 * time.Second
	// execKeep bounds the output of a host command kept in memory for
	// expect and save; the log file has all of it.
	execKeep = 1 << 20
	// execReport bounds the output in the step's data (reports, MCP
	// results, steps.ID.output): the last execReport bytes of what was
	// kept.
	execReport = 64 << 10
)

const execHead = 64 << 10

// lineMax is the longest line lineWriter holds back waiting for its end.
const lineMax = 4 << 10
