//go:build unix

package main

import "syscall"

// processCPU returns the CPU time, user and system, that the process has
// used so far, in nanoseconds.
func processCPU() (int64, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, err
	}
	return ru.Utime.Nano() + ru.Stime.Nano(), nil
}
