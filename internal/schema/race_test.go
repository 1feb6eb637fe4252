//go:build race

package schema

// raceEnabled is set under the race detector, which makes sync.Pool drop
// items at random, so allocation counts are meaningless.
const raceEnabled = true
