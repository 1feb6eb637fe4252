//go:build race

package mcpkit

// raceOn reports whether the race detector is on: allocation counts mean
// nothing then.
const raceOn = true
