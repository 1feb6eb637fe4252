package proxy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"
)

// FuzzBoundedReaders feeds what an upstream could send through the
// readers that bound it, none of which may panic or let more through:
//   - a stdio line limiter passes every line within the limit unchanged,
//     and puts in place of a longer one nothing or a JSON-RPC error
//     saying the limit;
//   - an event filter (the event stream of a GET, with no request to
//     answer) passes every event within the limit unchanged and drops a
//     longer one;
//   - an HTTP body limit passes a body that fits unchanged and fails a
//     longer one.
func FuzzBoundedReaders(f *testing.F) {
	f.Add([]byte("{\"jsonrpc\":\"2.0\"}\n{}\n"), 8)
	f.Add([]byte("no newline at all"), 4)
	f.Add([]byte("\n\n\n"), 1)
	f.Add([]byte{}, 1)
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"text\":\"xxxxxxxxxxxxxxxxxxxxxxxxxx\"}}\n{}\n"), 16)
	f.Add([]byte("{\"result\":{\"text\":\"xxxxxxxxxxxxxxxxxxxxxxxxxx\"},\"jsonrpc\":\"2.0\",\"id\":\"a-1\"}\r\n"), 16)
	f.Add([]byte("event: message\ndata: {}\n\nevent: message\ndata: {\"long\":\"xxxxxxxxxxxxxxxxxxxx\"}\n\ndata: 1\n\n"), 24)
	f.Fuzz(func(t *testing.T, data []byte, limit int) {
		if limit < 1 || limit > 1<<16 {
			return
		}
		got, err := io.ReadAll(newLineLimiter(bytes.NewReader(data), limit))
		if err != nil {
			t.Fatalf("the line limiter failed: %v", err)
		}
		var want bytes.Buffer
		for _, line := range bytes.SplitAfter(data, []byte("\n")) {
			if len(bytes.TrimSuffix(line, []byte("\n"))) <= limit {
				want.Write(line)
			}
		}
		var kept bytes.Buffer
		for _, line := range bytes.SplitAfter(got, []byte("\n")) {
			if standsIn(line) {
				continue // in place of a longer line
			}
			if len(bytes.TrimSuffix(line, []byte("\n"))) > limit {
				t.Fatalf("a line of %d bytes passed a limit of %d: %q", len(line), limit, line)
			}
			kept.Write(line)
		}
		if !bytes.Equal(kept.Bytes(), want.Bytes()) {
			t.Errorf("lines within the limit changed:\n got %q\nwant %q", kept.Bytes(), want.Bytes())
		}

		get, _ := http.NewRequest(http.MethodGet, "http://upstream", nil)
		got, err = io.ReadAll(&eventFilter{bound: &bound{req: get, limit: int64(limit)}, r: newBufReader(data), body: io.NopCloser(nil)})
		if err != nil {
			t.Fatalf("the event filter failed: %v", err)
		}
		var passed []byte
		for _, event := range bytes.SplitAfter(got, []byte("\n\n")) {
			if !standsIn(bytes.TrimPrefix(event, []byte("event: message\ndata: "))) {
				passed = append(passed, event...)
			}
		}
		if wantEvents := eventsWithin(data, limit); !bytes.Equal(passed, wantEvents) {
			t.Errorf("events:\n got %q\nwant %q", got, wantEvents)
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

// standsIn reports whether msg is one the proxy puts in place of a message
// over the bound: a refusal of an answer, or a stand-in for a request.
func standsIn(msg []byte) bool {
	var m struct {
		Method string
		Error  *struct{ Data map[string]json.RawMessage }
	}
	if json.Unmarshal(bytes.TrimSpace(msg), &m) != nil {
		return false
	}
	return m.Method == "io.github.mcpkit/proxy.requestTooLarge" || m.Error != nil && m.Error.Data[refusalMark] != nil
}

// eventsWithin returns the events of data within limit bytes, in order: an
// event ends with a blank line.
func eventsWithin(data []byte, limit int) []byte {
	var out, event []byte
	atLineStart := true
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		event = append(event, line...)
		blank := atLineStart && (string(line) == "\n" || string(line) == "\r\n")
		atLineStart = line[len(line)-1] == '\n'
		if blank {
			if len(event) <= limit {
				out = append(out, event...)
			}
			event = nil
		}
	}
	return out // an event the stream ends in the middle of is dropped
}

func newBufReader(data []byte) *bufio.Reader { return bufio.NewReaderSize(bytes.NewReader(data), 16) }
