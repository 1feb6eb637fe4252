//go:build !race

package mcpkit

const raceOn = false
