//go:build !unix

package main

import "errors"

// processCPU reports that the process's CPU time cannot be read here:
// getrusage is Unix's.
func processCPU() (int64, error) {
	return 0, errors.New("wholeserver: process CPU time is read with getrusage, which this system lacks")
}
