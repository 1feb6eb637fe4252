package middleware

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"hash"
	"io"
	"log/slog"
	"maps"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What CacheResults and Idempotent share: results kept as bytes in a store,
// keys hashed from their parts, and warnings about a store that fails.

// encodeResult returns res as stored: its JSON, as encoding/json writes a
// CallToolResult (the SDK's own marshalling, content types included),
// without the marks of CacheResults and Idempotent in its _meta, which say
// how one answer was served, not what the result is.
func encodeResult(res *mcp.CallToolResult) ([]byte, error) {
	if res.Meta[MetaKeyCache] != nil || res.Meta[MetaKeyIdempotent] != nil {
		r := *res
		r.Meta = maps.Clone(res.Meta)
		delete(r.Meta, MetaKeyCache)
		delete(r.Meta, MetaKeyIdempotent)
		res = &r
	}
	return json.Marshal(res)
}

// decodeResult returns a new result decoded from data, which encodeResult
// wrote, with metaValue under metaKey in its _meta. Structured content is
// kept as the JSON it was (json.RawMessage), so that its numbers and key
// order are those of the first answer.
//
// The content kinds a tool result holds are decoded here with
// encoding/json; anything else goes through the SDK's own decoding, which
// knows every kind but costs a 32 KiB buffer per call.
func decodeResult(data []byte, metaKey, metaValue string) (*mcp.CallToolResult, error) {
	var w storedResult
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, err
	}
	res := &mcp.CallToolResult{Meta: w.Meta, IsError: w.IsError, Content: make([]mcp.Content, 0, len(w.Content))}
	for _, c := range w.Content {
		content := c.content()
		if content == nil {
			res = new(mcp.CallToolResult)
			if err := json.Unmarshal(data, res); err != nil {
				return nil, err
			}
			break
		}
		res.Content = append(res.Content, content)
	}
	if w.StructuredContent != nil {
		res.StructuredContent = w.StructuredContent
	}
	if res.Content == nil {
		res.Content = []mcp.Content{}
	}
	if res.Meta == nil {
		res.Meta = mcp.Meta{}
	}
	res.Meta[metaKey] = metaValue
	return res, nil
}

// A storedResult is the JSON of a stored CallToolResult, as the SDK writes
// it.
type storedResult struct {
	Meta              mcp.Meta        `json:"_meta"`
	Content           []storedContent `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

// A storedContent is one content block of a stored result: the members of
// the kinds a tool result may hold (MCP's ContentBlock).
type storedContent struct {
	Type        string                `json:"type"`
	Text        string                `json:"text"`
	MIMEType    string                `json:"mimeType"`
	Data        []byte                `json:"data"`
	URI         string                `json:"uri"`
	Name        string                `json:"name"`
	Title       string                `json:"title"`
	Description string                `json:"description"`
	Size        *int64                `json:"size"`
	Icons       []mcp.Icon            `json:"icons"`
	Resource    *mcp.ResourceContents `json:"resource"`
	Meta        mcp.Meta              `json:"_meta"`
	Annotations *mcp.Annotations      `json:"annotations"`
}

// content returns c as the SDK's type for its kind, or nil for a kind it
// does not know.
func (c *storedContent) content() mcp.Content {
	switch c.Type {
	case "text":
		return &mcp.TextContent{Text: c.Text, Meta: c.Meta, Annotations: c.Annotations}
	case "image":
		return &mcp.ImageContent{Data: c.Data, MIMEType: c.MIMEType, Meta: c.Meta, Annotations: c.Annotations}
	case "audio":
		return &mcp.AudioContent{Data: c.Data, MIMEType: c.MIMEType, Meta: c.Meta, Annotations: c.Annotations}
	case "resource_link":
		return &mcp.ResourceLink{URI: c.URI, Name: c.Name, Title: c.Title, Description: c.Description,
			MIMEType: c.MIMEType, Size: c.Size, Icons: c.Icons, Meta: c.Meta, Annotations: c.Annotations}
	case "resource":
		return &mcp.EmbeddedResource{Resource: c.Resource, Meta: c.Meta, Annotations: c.Annotations}
	}
	return nil
}

// A keyHash builds a store key from parts: each part is hashed with its
// length, so that no two lists of parts hash alike ("ab","c" and "a","bc").
type keyHash struct {
	d hash.Hash
	n [binary.MaxVarintLen64]byte
}

func newKeyHash(domain string) *keyHash {
	h := &keyHash{d: sha256.New()}
	return h.add(domain)
}

func (h *keyHash) add(part string) *keyHash {
	h.d.Write(binary.AppendUvarint(h.n[:0], uint64(len(part))))
	io.WriteString(h.d, part)
	return h
}

func (h *keyHash) addBytes(part []byte) *keyHash {
	h.d.Write(binary.AppendUvarint(h.n[:0], uint64(len(part))))
	h.d.Write(part)
	return h
}

// sum returns prefix and the hexadecimal SHA-256 of the parts.
func (h *keyHash) sum(prefix string) string {
	var s [sha256.Size]byte
	h.d.Sum(s[:0])
	out := make([]byte, len(prefix)+hex.EncodedLen(len(s)))
	copy(out, prefix)
	hex.Encode(out[len(prefix):], s[:])
	return string(out)
}

// randomToken returns 128 random bits in hexadecimal.
func randomToken() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// warnEvery is the least time between two warnings of one warner.
const warnEvery = time.Minute

// A warner logs warnings about a failing store at most once per warnEvery,
// counting the ones it drops, so that a store that is down does not make a
// record per call.
type warner struct {
	logger     *slog.Logger
	last       atomic.Int64 // time of the last warning, in Unix nanoseconds; 0 before the first
	suppressed atomic.Int64
}

func (w *warner) warn(msg string, args ...any) {
	if w.logger == nil {
		return
	}
	now := time.Now().UnixNano()
	last := w.last.Load()
	if last != 0 && now-last < int64(warnEvery) || !w.last.CompareAndSwap(last, now) {
		w.suppressed.Add(1)
		return
	}
	if n := w.suppressed.Swap(0); n > 0 {
		args = append(args, "suppressed", n)
	}
	w.logger.Warn(msg, args...)
}
