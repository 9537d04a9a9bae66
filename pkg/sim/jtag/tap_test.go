package jtag

import "testing"

func TestTAPTransitions(t *testing.T) {
	tests := []struct {
		from    tapState
		tms     bool
		want    tapState
		wantStr string
	}{
		{stateReset, false, stateIdle, "Run-Test/Idle"},
		{stateReset, true, stateReset, "Test-Logic-Reset"},
		{stateIdle, false, stateIdle, "Run-Test/Idle"},
		{stateIdle, true, stateSelectDR, "Select-DR-Scan"},
		{stateSelectDR, false, stateCaptureDR, "Capture-DR"},
		{stateSelectDR, true, stateSelectIR, "Select-IR-Scan"},
		{stateCaptureDR, false, stateShiftDR, "Shift-DR"},
		{stateCaptureDR, true, stateExit1DR, "Exit1-DR"},
		{stateShiftDR, false, stateShiftDR, "Shift-DR"},
		{stateShiftDR, true, stateExit1DR, "Exit1-DR"},
		{stateExit1DR, false, statePauseDR, "Pause-DR"},
		{stateExit1DR, true, stateUpdateDR, "Update-DR"},
		{statePauseDR, false, statePauseDR, "Pause-DR"},
		{statePauseDR, true, stateExit2DR, "Exit2-DR"},
		{stateExit2DR, false, stateShiftDR, "Shift-DR"},
		{stateExit2DR, true, stateUpdateDR, "Update-DR"},
		{stateUpdateDR, false, stateIdle, "Run-Test/Idle"},
		{stateUpdateDR, true, stateSelectDR, "Select-DR-Scan"},
		{stateSelectIR, false, stateCaptureIR, "Capture-IR"},
		{stateSelectIR, true, stateReset, "Test-Logic-Reset"},
		{stateCaptureIR, false, stateShiftIR, "Shift-IR"},
		{stateCaptureIR, true, stateExit1IR, "Exit1-IR"},
		{stateShiftIR, false, stateShiftIR, "Shift-IR"},
		{stateShiftIR, true, stateExit1IR, "Exit1-IR"},
		{stateExit1IR, false, statePauseIR, "Pause-IR"},
		{stateExit1IR, true, stateUpdateIR, "Update-IR"},
		{statePauseIR, false, statePauseIR, "Pause-IR"},
		{statePauseIR, true, stateExit2IR, "Exit2-IR"},
		{stateExit2IR, false, stateShiftIR, "Shift-IR"},
		{stateExit2IR, true, stateUpdateIR, "Update-IR"},
		{stateUpdateIR, false, stateIdle, "Run-Test/Idle"},
		{stateUpdateIR, true, stateSelectDR, "Select-DR-Scan"},
	}
	for _, tt := range tests {
		name := tt.from.String() + "/TMS=0"
		if tt.tms {
			name = tt.from.String() + "/TMS=1"
		}
		t.Run(name, func(t *testing.T) {
			got := tt.from.next(tt.tms)
			if got != tt.want || got.String() != tt.wantStr {
				t.Errorf("next = %v, want %v", got, tt.wantStr)
			}
		})
	}
}

// Five clocks with TMS high reach Test-Logic-Reset from any state: that is
// how a debugger resets a TAP without TRST.
func TestTAPFiveTMSHighReset(t *testing.T) {
	for s := stateReset; s <= stateUpdateIR; s++ {
		t.Run(s.String(), func(t *testing.T) {
			got := s
			for range 5 {
				got = got.next(true)
			}
			if got != stateReset {
				t.Errorf("after 5 TMS=1: %v, want Test-Logic-Reset", got)
			}
		})
	}
}
