//go:build race

package otelmcp_test

const raceEnabled = true
