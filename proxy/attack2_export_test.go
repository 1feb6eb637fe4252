package proxy

// ProgressRoutes returns how many progress routes are registered, in the
// process-wide registry (for the attack tests).
func ProgressRoutes() int {
	n := 0
	progressRoutes.Range(func(any, any) bool { n++; return true })
	return n
}
