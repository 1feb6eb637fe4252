//go:build !unix

package proxy_test

import "time"

// cpuTime cannot tell the process's CPU time here.
func cpuTime() (time.Duration, bool) { return 0, false }
