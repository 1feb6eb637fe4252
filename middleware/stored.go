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
func decodeResult(data []byte, metaKey, metaValue string) (*mcp.CallToolResult, error) {
	res := new(mcp.CallToolResult)
	if err := json.Unmarshal(data, res); err != nil {
		return nil, err
	}
	if res.StructuredContent != nil {
		var raw struct {
			StructuredContent json.RawMessage `json:"structuredContent"`
		}
		if err := json.Unmarshal(data, &raw); err != nil {
			return nil, err
		}
		res.StructuredContent = raw.StructuredContent
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
