package jtag

// tapState is a state of the IEEE 1149.1 TAP controller.
type tapState uint8

// The sixteen TAP controller states.
const (
	stateReset tapState = iota // Test-Logic-Reset
	stateIdle                  // Run-Test/Idle
	stateSelectDR
	stateCaptureDR
	stateShiftDR
	stateExit1DR
	statePauseDR
	stateExit2DR
	stateUpdateDR
	stateSelectIR
	stateCaptureIR
	stateShiftIR
	stateExit1IR
	statePauseIR
	stateExit2IR
	stateUpdateIR
)

// tapNext holds, for each state, the state a rising TCK edge leads to with
// TMS low ([0]) and with TMS high ([1]).
var tapNext = [16][2]tapState{
	stateReset:     {stateIdle, stateReset},
	stateIdle:      {stateIdle, stateSelectDR},
	stateSelectDR:  {stateCaptureDR, stateSelectIR},
	stateCaptureDR: {stateShiftDR, stateExit1DR},
	stateShiftDR:   {stateShiftDR, stateExit1DR},
	stateExit1DR:   {statePauseDR, stateUpdateDR},
	statePauseDR:   {statePauseDR, stateExit2DR},
	stateExit2DR:   {stateShiftDR, stateUpdateDR},
	stateUpdateDR:  {stateIdle, stateSelectDR},
	stateSelectIR:  {stateCaptureIR, stateReset},
	stateCaptureIR: {stateShiftIR, stateExit1IR},
	stateShiftIR:   {stateShiftIR, stateExit1IR},
	stateExit1IR:   {statePauseIR, stateUpdateIR},
	statePauseIR:   {statePauseIR, stateExit2IR},
	stateExit2IR:   {stateShiftIR, stateUpdateIR},
	stateUpdateIR:  {stateIdle, stateSelectDR},
}

var tapNames = [16]string{
	stateReset:     "Test-Logic-Reset",
	stateIdle:      "Run-Test/Idle",
	stateSelectDR:  "Select-DR-Scan",
	stateCaptureDR: "Capture-DR",
	stateShiftDR:   "Shift-DR",
	stateExit1DR:   "Exit1-DR",
	statePauseDR:   "Pause-DR",
	stateExit2DR:   "Exit2-DR",
	stateUpdateDR:  "Update-DR",
	stateSelectIR:  "Select-IR-Scan",
	stateCaptureIR: "Capture-IR",
	stateShiftIR:   "Shift-IR",
	stateExit1IR:   "Exit1-IR",
	statePauseIR:   "Pause-IR",
	stateExit2IR:   "Exit2-IR",
	stateUpdateIR:  "Update-IR",
}

// next returns the state a rising TCK edge with the given TMS leads to.
func (s tapState) next(tms bool) tapState {
	if tms {
		return tapNext[s&15][1]
	}
	return tapNext[s&15][0]
}

func (s tapState) String() string {
	return tapNames[s&15]
}
