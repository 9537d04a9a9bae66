package steps

// BarrierWork calls fn with the work each validation spends following
// barriers, until the returned function is called.
func BarrierWork(fn func(uint64)) (stop func()) {
	barrierWorkHook = fn
	return func() { barrierWorkHook = nil }
}
