//go:build !race

package visibility_test

const raceEnabled = false
