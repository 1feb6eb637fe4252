package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
)

// recordHeader marks the request an endpoint keeps for /floor to replay.
// The runner sets it on one call, after the measured ones.
const recordHeader = "Wholeserver-Record"

// recording is an MCP endpoint that keeps the last request marked with
// recordHeader. Other requests pass through after one header lookup.
type recording struct {
	next http.Handler

	mu     sync.Mutex
	header http.Header
	body   []byte
}

func (e *recording) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get(recordHeader) == "" {
		e.next.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	if err != nil {
		http.Error(w, "reading the request body failed", http.StatusBadRequest)
		return
	}
	header := r.Header.Clone()
	header.Del(recordHeader)
	e.mu.Lock()
	e.header, e.body = header, body
	e.mu.Unlock()
	r.Body = io.NopCloser(bytes.NewReader(body))
	e.next.ServeHTTP(w, r)
}

// replay serves the recorded request again, in process, without a
// network: what BenchmarkFloor does.
func (e *recording) replay(header http.Header, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	req.Header = header.Clone()
	w := httptest.NewRecorder()
	e.next.ServeHTTP(w, req)
	return w
}

// floorCost is /floor's answer: what n replays cost the process.
type floorCost struct {
	Calls int  `json:"calls"`
	Cost  cost `json:"cost"`
}

// maxFloorCalls bounds the replays one /floor request may ask for.
const maxFloorCalls = 100000

// serveFloor answers GET /floor?path=P&n=N: it replays the request last
// recorded on endpoint P N times into the endpoint's handler, in process
// (no connection, no kernel, no client), checks that every answer is the
// first one's, and answers what the replays cost the process. That is the
// handler's floor, measured in the same process, build and mode as the
// calls over HTTP.
func serveFloor(w http.ResponseWriter, r *http.Request, endpoints map[string]*recording) {
	e, ok := endpoints[r.URL.Query().Get("path")]
	if !ok {
		http.Error(w, "path must name an MCP endpoint: /stateless or /stateful", http.StatusBadRequest)
		return
	}
	n, err := strconv.Atoi(r.URL.Query().Get("n"))
	if err != nil || n < 1 || n > maxFloorCalls {
		http.Error(w, fmt.Sprintf("n must be a number of calls from 1 to %d", maxFloorCalls), http.StatusBadRequest)
		return
	}
	e.mu.Lock()
	header, body := e.header, e.body
	e.mu.Unlock()
	if body == nil {
		http.Error(w, "no request recorded on that endpoint", http.StatusConflict)
		return
	}
	first := e.replay(header, body)
	if first.Code != http.StatusOK {
		http.Error(w, fmt.Sprintf("the replayed request failed: HTTP %d: %.300s", first.Code, first.Body.String()), http.StatusBadGateway)
		return
	}
	want := first.Body.Bytes()
	c0, err := readCost()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	for range n {
		got := e.replay(header, body)
		if got.Code != http.StatusOK || !bytes.Equal(got.Body.Bytes(), want) {
			http.Error(w, fmt.Sprintf("a replay answered differently: HTTP %d: %.300s", got.Code, got.Body.String()), http.StatusBadGateway)
			return
		}
	}
	c1, err := readCost()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(floorCost{Calls: n, Cost: c1.sub(c0)})
}

// sub returns what was spent between c0 and c.
func (c cost) sub(c0 cost) cost {
	return cost{
		CPUNanos:     c.CPUNanos - c0.CPUNanos,
		AllocBytes:   c.AllocBytes - c0.AllocBytes,
		AllocObjects: c.AllocObjects - c0.AllocObjects,
		GCCycles:     c.GCCycles - c0.GCCycles,
	}
}
