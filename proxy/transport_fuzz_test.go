package proxy

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzBoundedReaders feeds what an upstream could send through the
// readers that bound it: a stdio line limiter passes input whose lines all
// fit through unchanged and fails input with a longer line, and an HTTP
// body limit passes a body that fits unchanged and fails a longer one;
// neither panics nor lets more through.
func FuzzBoundedReaders(f *testing.F) {
	f.Add([]byte("{\"jsonrpc\":\"2.0\"}\n{}\n"), 8)
	f.Add([]byte("no newline at all"), 4)
	f.Add([]byte("\n\n\n"), 1)
	f.Add([]byte{}, 1)
	f.Fuzz(func(t *testing.T, data []byte, limit int) {
		if limit < 1 || limit > 1<<16 {
			return
		}
		longest, line := 0, 0
		for _, c := range data {
			if c == '\n' {
				line = 0
				continue
			}
			line++
			longest = max(longest, line)
		}
		got, err := io.ReadAll(newLineLimiter(bytes.NewReader(data), limit))
		if longest > limit {
			if !errors.Is(err, ErrResponseTooLarge) {
				t.Errorf("a line of %d bytes passed a limit of %d", longest, limit)
			}
		} else if err != nil || !bytes.Equal(got, data) {
			t.Errorf("lines within the limit changed: %q, %v", got, err)
		}

		got, err = io.ReadAll(&limitedBody{r: io.NopCloser(bytes.NewReader(data)), left: int64(limit)})
		if len(data) > limit {
			if !errors.Is(err, ErrResponseTooLarge) || len(got) > limit {
				t.Errorf("a body of %d bytes passed a limit of %d (%d read, %v)", len(data), limit, len(got), err)
			}
		} else if err != nil || !bytes.Equal(got, data) {
			t.Errorf("a body within the limit changed: %q, %v", got, err)
		}
	})
}
