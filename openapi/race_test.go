//go:build race

package openapi_test

// raceEnabled is true when the tests run with the race detector, which
// makes converting whole documents many times slower and finds nothing
// there: it runs on one goroutine.
const raceEnabled = true
