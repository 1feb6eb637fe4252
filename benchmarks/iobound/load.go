package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"time"
)

// The load generator: virtual users that each open a session per tool call,
// as the published benchmark's k6 script does, with plain HTTP requests
// built once per user, so that every server reads the same bytes and the
// generator spends little of the machine.

// mode is how a virtual user reaches a server.
type mode struct {
	name    string
	path    string // the server's endpoint
	version string // the protocol version the client speaks
	// initialize: each call opens a session (initialize, then
	// notifications/initialized) before tools/call, and closes it with
	// DELETE when the server gave it a session ID.
	initialize bool
	// wantSession: the server must give a session ID.
	wantSession bool
}

var modes = []mode{
	// The published benchmark's sequence, against servers that keep a
	// session from initialize to DELETE.
	{name: "session-2025", path: "/stateful", version: "2025-11-25", initialize: true, wantSession: true},
	// The same sequence against stateless servers, as the published go-sdk
	// server is configured: initialize is answered, no session is kept, so
	// there is nothing to DELETE.
	{name: "stateless-2025", path: "/stateless", version: "2025-11-25", initialize: true},
	// 2026-07-28 has no session and no initialize: each request carries the
	// client's version, capabilities and name, so a call is one request.
	{name: "stateless-2026", path: "/stateless", version: "2026-07-28"},
}

func modeNamed(name string) (mode, bool) {
	for _, m := range modes {
		if m.name == name {
			return m, true
		}
	}
	return mode{}, false
}

// toolCall is one call a virtual user makes, and how to check its answer.
type toolCall struct {
	name  string
	body  []byte                        // the tools/call request
	check func(structured []byte) error // judges the structured result
}

// vuCalls returns the calls of virtual user n, in the order it makes them:
// the published benchmark's three, with its arguments, for one seeded user.
func vuCalls(n int, c *catalog, m mode) []toolCall {
	user := userID(n)
	const category, minPrice, maxPrice, limit = "Electronics", 50.0, 500.0, 10
	total, page := c.search(category, minPrice, maxPrice, limit)
	cart := seedCart(n)
	items := []lineItem{{ProductID: 42, Quantity: 2}, {ProductID: 1337, Quantity: 1}}
	priced := quoteFor(user, items)
	return []toolCall{
		{searchName, callBody(m, searchName, searchIn{category, minPrice, maxPrice, limit}), func(raw []byte) error {
			var out searchOut
			if err := json.Unmarshal(raw, &out); err != nil {
				return err
			}
			if out.TotalFound != total || len(out.Products) != len(page) || len(page) == 0 || out.Products[0].ID != page[0].ID || len(out.TopIDs) != 10 {
				return fmt.Errorf("found %d, %d products, %d popular; want %d, %d, 10", out.TotalFound, len(out.Products), len(out.TopIDs), total, len(page))
			}
			return nil
		}},
		{cartName, callBody(m, cartName, userIn{user}), func(raw []byte) error {
			var out cartOut
			if err := json.Unmarshal(raw, &out); err != nil {
				return err
			}
			if out.UserID != user || !reflect.DeepEqual(out.Items, cart) || out.ItemCount != len(cart) ||
				len(out.RecentHistory) != 5 || out.FirstProduct != productByID(cart[0].ProductID).Name {
				return fmt.Errorf("cart of %s: %d items, %d orders, first %q; want %d items, 5 orders", out.UserID, out.ItemCount, len(out.RecentHistory), out.FirstProduct, len(cart))
			}
			return nil
		}},
		{checkoutName, callBody(m, checkoutName, checkoutIn{user, items}), func(raw []byte) error {
			var out checkoutOut
			if err := json.Unmarshal(raw, &out); err != nil {
				return err
			}
			if out.Status != "confirmed" || out.Total != priced.Total || out.ItemsCount != 2 || out.RateLimitCount < 1 || out.OrderID != priced.OrderID {
				return fmt.Errorf("checkout: %+v, want total %v", out, priced.Total)
			}
			return nil
		}},
	}
}

// meta2026 is what a 2026-07-28 request carries in place of a session.
const meta2026 = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"iobound","version":"1.0"}}`

func callBody(m mode, tool string, args any) []byte {
	raw, err := json.Marshal(args)
	if err != nil {
		panic(err) // the argument types always marshal
	}
	meta := ""
	if m.version >= "2026-07-28" {
		meta = "," + meta2026
	}
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":%q,"arguments":%s%s}}`, tool, raw, meta)
}

func listBody(m mode) []byte {
	if m.version >= "2026-07-28" {
		return []byte(`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{` + meta2026 + `}}`)
	}
	return []byte(`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}`)
}

var (
	initBody   = []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"iobound","version":"1.0"}}}`)
	notifyBody = []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
)

// tally is what a virtual user counted while recording was on.
type tally struct {
	toolCalls, requests, errors int
	firstErr                    error
	callLatency                 []time.Duration // of each tools/call request
	sessionLatency              []time.Duration // from initialize to the call's answer
}

// vu is one virtual user.
type vu struct {
	client    *http.Client
	url       string // the server's endpoint
	mode      mode
	calls     []toolCall
	list      []byte       // tools/list, made in a session of its own after the calls; nil for none
	recording *atomic.Bool // whether what completes now counts
	tally
}

// iteration makes the user's calls, each in a session of its own, then its
// tools/list, as one iteration of the published benchmark does (the pause
// after it is the caller's).
func (v *vu) iteration(ctx context.Context) {
	for _, c := range v.calls {
		v.note(ctx, v.session(ctx, c.name, c.body, c.check))
	}
	if v.list != nil {
		v.note(ctx, v.session(ctx, "", v.list, nil))
	}
}

func (v *vu) note(ctx context.Context, err error) {
	if err == nil || ctx.Err() != nil || !v.recording.Load() {
		return
	}
	v.errors++
	if v.firstErr == nil {
		v.firstErr = err
	}
}

// session opens a session if the mode has them, sends body (a tools/call of
// tool, or tools/list when tool is empty), checks the answer, and closes
// the session.
func (v *vu) session(ctx context.Context, tool string, body []byte, check func([]byte) error) error {
	start := time.Now()
	sid := ""
	if v.mode.initialize {
		res, h, err := v.post(ctx, "initialize", "", "", initBody)
		if err != nil {
			return err
		}
		if res.Result == nil {
			return fmt.Errorf("initialize: no result")
		}
		v.count(1)
		sid = h.Get("Mcp-Session-Id")
		if v.mode.wantSession && sid == "" {
			return errors.New("initialize: no session ID")
		}
		if _, _, err := v.post(ctx, "notifications/initialized", "", sid, notifyBody); err != nil {
			return err
		}
	}
	method := "tools/call"
	if tool == "" {
		method = "tools/list"
	}
	sent := time.Now()
	res, _, err := v.post(ctx, method, tool, sid, body)
	answered := time.Now()
	if err == nil {
		err = judge(method, res, check)
	}
	if err == nil && v.recording.Load() {
		v.count(1)
		if tool != "" {
			v.toolCalls++
			v.callLatency = append(v.callLatency, answered.Sub(sent))
			v.sessionLatency = append(v.sessionLatency, answered.Sub(start))
		}
	}
	if sid != "" {
		if derr := v.close(ctx, sid); err == nil {
			err = derr
		}
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, tool, err)
	}
	return nil
}

func (v *vu) count(n int) {
	if v.recording.Load() {
		v.requests += n
	}
}

// judge checks an answer: a result, not an error; for a call, a structured
// result that check accepts and the same as JSON text; for a list, three tools.
func judge(method string, res rpcResponse, check func([]byte) error) error {
	if res.Error != nil {
		return fmt.Errorf("JSON-RPC error %d: %s", res.Error.Code, clip(res.Error.Message))
	}
	if res.Result == nil {
		return errors.New("no result")
	}
	if method == "tools/list" {
		if len(res.Result.Tools) != 3 {
			return fmt.Errorf("%d tools, want 3", len(res.Result.Tools))
		}
		return nil
	}
	if res.Result.IsError {
		text := ""
		if len(res.Result.Content) > 0 {
			text = res.Result.Content[0].Text
		}
		return fmt.Errorf("tool error: %s", clip(text))
	}
	if len(res.Result.Content) != 1 || res.Result.Content[0].Type != "text" {
		return fmt.Errorf("%d content blocks, want one text block", len(res.Result.Content))
	}
	return check(res.Result.StructuredContent)
}

// rpcResponse is the part of a JSON-RPC answer the checks read.
type rpcResponse struct {
	Result *struct {
		IsError           bool            `json:"isError"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		Content           []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Tools []json.RawMessage `json:"tools"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// post sends one JSON-RPC message and decodes the answer, if it is one (a
// notification gets 202 and no body).
func (v *vu) post(ctx context.Context, method, name, sid string, body []byte) (rpcResponse, http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, v.url, bytes.NewReader(body))
	if err != nil {
		return rpcResponse{}, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if method != "initialize" {
		req.Header.Set("Mcp-Protocol-Version", v.mode.version)
	}
	if v.mode.version >= "2026-07-28" {
		req.Header.Set("Mcp-Method", method)
		if name != "" {
			req.Header.Set("Mcp-Name", name)
		}
	}
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := v.client.Do(req)
	if err != nil {
		return rpcResponse{}, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return rpcResponse{}, nil, err
	}
	if strings.HasPrefix(method, "notifications/") {
		if resp.StatusCode != http.StatusAccepted {
			return rpcResponse{}, nil, fmt.Errorf("%s: HTTP %d", method, resp.StatusCode)
		}
		return rpcResponse{}, resp.Header, nil
	}
	if resp.StatusCode != http.StatusOK {
		return rpcResponse{}, nil, fmt.Errorf("%s: HTTP %d: %s", method, resp.StatusCode, clip(string(raw)))
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		raw = lastEvent(raw)
	}
	var res rpcResponse
	if err := json.Unmarshal(raw, &res); err != nil {
		return rpcResponse{}, nil, fmt.Errorf("%s: %w", method, err)
	}
	return res, resp.Header, nil
}

// lastEvent returns the data of the last event of an event stream.
func lastEvent(stream []byte) []byte {
	var data []byte
	for line := range bytes.Lines(stream) {
		if d, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data:")); ok {
			data = bytes.TrimSpace(d)
		}
	}
	return data
}

// close ends a session with DELETE.
func (v *vu) close(ctx context.Context, sid string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, v.url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", v.mode.version)
	resp, err := v.client.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		return fmt.Errorf("DELETE: HTTP %d", resp.StatusCode)
	}
	return nil
}

// newLoadClient returns the HTTP client the virtual users share: a kept-
// alive connection for each, as k6 keeps one per virtual user.
func newLoadClient(vus int) *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		MaxIdleConns:        vus * 2,
		MaxIdleConnsPerHost: vus * 2,
		IdleConnTimeout:     90 * time.Second,
	}}
}
