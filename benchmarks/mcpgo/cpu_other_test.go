//go:build !unix

package mcpgo_test

// processCPU reports that the process's CPU time is not known here.
func processCPU() (int64, bool) { return 0, false }
