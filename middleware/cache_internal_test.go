package middleware

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMemoryCacheBound sets keys and values of random sizes and checks
// that the bytes held never exceed the bound and are counted right.
func TestMemoryCacheBound(t *testing.T) {
	const max = 1000
	c := NewMemoryCache(max)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 5000 {
		key := fmt.Sprint(r.IntN(100))
		ttl := time.Duration(r.IntN(3)) * time.Hour // some zero: deletes
		c.Set(t.Context(), key, make([]byte, r.IntN(300)), ttl)
		if i%3 == 0 {
			c.Get(t.Context(), fmt.Sprint(r.IntN(100)))
		}
		var sum int64
		for _, el := range c.entries {
			sum += el.Value.(*cacheEntry).bytes()
		}
		if c.size != sum || c.size > max || c.lru.Len() != len(c.entries) {
			t.Fatalf("step %d: size %d, entries hold %d, bound %d, %d in the list and %d in the map", i, c.size, sum, max, c.lru.Len(), len(c.entries))
		}
	}
}

// TestMemoryIdempotencyStoreBound does the same for the idempotency store.
func TestMemoryIdempotencyStoreBound(t *testing.T) {
	const max = 2000
	s := NewMemoryIdempotencyStore(&MemoryIdempotencyStoreOptions{MaxBytes: max})
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 5000 {
		key := fmt.Sprint(r.IntN(100))
		tok := fmt.Sprint(i)
		if _, claimed, _ := s.Claim(t.Context(), key, IdempotencyRecord{Fingerprint: "fp", Token: tok}, time.Hour); claimed {
			switch r.IntN(3) {
			case 0:
				s.Complete(t.Context(), key, tok, make([]byte, r.IntN(500)), time.Hour)
			case 1:
				s.Release(t.Context(), key, tok)
			}
		}
		var sum int64
		for _, el := range s.records {
			sum += el.Value.(*idemEntry).bytes()
		}
		if s.size != sum || s.size > max || s.lru.Len() != len(s.records) {
			t.Fatalf("step %d: size %d, records hold %d, bound %d", i, s.size, sum, max)
		}
	}
}

// TestDecodeResult checks that stored results come back as they were, on
// the fast path (the kinds a tool result holds) and through the SDK's
// decoding (any other kind).
func TestDecodeResult(t *testing.T) {
	size := int64(3)
	for _, res := range []*mcp.CallToolResult{
		{Content: []mcp.Content{
			&mcp.TextContent{Text: "t", Meta: mcp.Meta{"m": "1"}, Annotations: &mcp.Annotations{Priority: 1}},
			&mcp.ImageContent{Data: []byte{1, 2}, MIMEType: "image/png"},
			&mcp.AudioContent{Data: []byte{}, MIMEType: "audio/wav"},
			&mcp.ResourceLink{URI: "file:///a", Name: "a", Title: "A", Description: "d", MIMEType: "text/plain", Size: &size, Icons: []mcp.Icon{{Source: "https://x/i.png"}}},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///b", Blob: []byte{9}}},
		}, StructuredContent: map[string]any{"b": 1, "a": []any{true}}, Meta: mcp.Meta{"k": "v"}},
		//lint:ignore SA1019 a kind the fast path does not know, to reach the SDK's decoding
		{Content: []mcp.Content{&mcp.ToolUseContent{ID: "u1", Name: "n", Input: map[string]any{"x": 1.5}}}},
		{Content: []mcp.Content{}},
	} {
		data, err := encodeResult(res)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeResult(data, "mark", "yes")
		if err != nil {
			t.Fatal(err)
		}
		if got.Meta["mark"] != "yes" {
			t.Errorf("no mark in %v", got.Meta)
		}
		delete(got.Meta, "mark")
		again, _ := encodeResult(got)
		if string(again) != string(data) {
			t.Errorf("round trip:\n%s\n%s", data, again)
		}
	}
	if _, err := decodeResult([]byte(`{"content":`), "mark", "yes"); err == nil {
		t.Error("no error for a broken record")
	}
}
