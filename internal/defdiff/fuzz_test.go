package defdiff

import (
	"encoding/json"
	"testing"
)

// FuzzDefinition reads arbitrary text as a definition, as CheckLock reads a
// lockfile: Definition must not panic, and what it returns must be JSON,
// its own canonical form, and no change from the input.
func FuzzDefinition(f *testing.F) {
	f.Add([]byte(`{"name":"t","inputSchema":{"type":"object","properties":{"n":{"maximum":1e3,"minimum":-0.0}}}}`))
	f.Add([]byte(`{"annotations":{"readOnlyHint":false,"destructiveHint":false,"title":"<&>"},"_meta":{}}`))
	f.Add([]byte(`{"n":[1E400,-1e-400,12345678901234567890123,0.000001,1e-7]}`))
	f.Add([]byte(`{"a":1} x`))
	f.Fuzz(func(t *testing.T, data []byte) {
		canon, err := Definition(data)
		if err != nil {
			return
		}
		if !json.Valid(canon) {
			t.Fatalf("Definition(%q) = %q, not JSON", data, canon)
		}
		again, err := Definition(canon)
		if err != nil || string(again) != string(canon) {
			t.Fatalf("Definition is not idempotent: %q, then %q, %v", canon, again, err)
		}
		if cs := Compare(data, canon); len(cs) != 0 {
			t.Fatalf("Compare(%q, its canonical form) = %v", data, cs)
		}
	})
}
