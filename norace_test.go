//go:build !race

package mcpkit_test

const raceEnabled = false
