package requeststate

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpkit/mcpkit"
)

// DefaultTTL is how long a sealed request state stays valid when
// [Options] do not say.
const DefaultTTL = 10 * time.Minute

// MinKeyLen is the shortest key a [Sealer] takes, in bytes.
const MinKeyLen = 32

// ErrInvalid is wrapped by the error [Sealer.Open] returns for a request
// state that it does not accept: tampered with, expired, sealed for another
// principal, tool or arguments, sealed with a retired key, or not a sealed
// state at all. The client is told only "invalid request state".
var ErrInvalid = errors.New("requeststate: invalid request state")

// A Sealer protects the requestState of input_required results
// (multi-round-trip requests, SEP-2322), which the client holds and sends
// back with its answer, and which the spec says servers must treat as
// attacker-controlled. Seal encrypts and authenticates the state
// (AES-256-GCM under a key derived from yours) together with an expiry and
// what the state is for: the caller ([mcpkit.Principal]: the verified
// token's user, else a digest of the bearer token), the tool's identity
// (the name and version of the tool it derives from, [mcpkit.Tool.ID]: a
// state sealed by version 1 does not open on a call to version 2, and one
// sealed on a call by a deprecated alias opens on the same call by the
// tool's own name) and a digest of the call's arguments, which a retried
// call repeats.
// Open accepts only a state sealed by one of its keys, unexpired, for the
// same principal, tool and arguments.
//
// Replicas that share the keys open each other's states, so any replica can
// take the retried call. To rotate keys, put the new key first (it seals)
// and keep the old ones after it (they still open) for one TTL.
//
// A Sealer is safe for concurrent use.
type Sealer struct {
	keys []sealKey // the first seals; all open
	ttl  time.Duration
}

type sealKey struct {
	id   [4]byte // names the key in a sealed state, so Open tries one
	aead cipher.AEAD
}

// Options configures a [Sealer]. A nil *Options means the defaults.
type Options struct {
	// TTL is how long a sealed state stays valid; zero means DefaultTTL.
	TTL time.Duration
}

// New returns a Sealer with the given keys, each at least MinKeyLen bytes
// of secret randomness (crypto/rand), the first of which seals. It fails
// for no key, or a short one.
func New(keys [][]byte, opts *Options) (*Sealer, error) {
	if len(keys) == 0 {
		return nil, errors.New("requeststate: New: no key")
	}
	s := &Sealer{ttl: DefaultTTL}
	if opts != nil && opts.TTL > 0 {
		s.ttl = opts.TTL
	}
	for i, k := range keys {
		if len(k) < MinKeyLen {
			return nil, fmt.Errorf("requeststate: New: key %d is %d bytes, at least %d are needed", i, len(k), MinKeyLen)
		}
		derived, err := hkdf.Key(sha256.New, k, nil, "mcpkit requestState v1", 32)
		if err != nil {
			return nil, fmt.Errorf("requeststate: New: %w", err)
		}
		block, err := aes.NewCipher(derived)
		if err != nil {
			return nil, fmt.Errorf("requeststate: New: %w", err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("requeststate: New: %w", err)
		}
		sum := sha256.Sum256(derived)
		s.keys = append(s.keys, sealKey{id: [4]byte(sum[:4]), aead: aead})
	}
	return s, nil
}

const stateVersion = 1

// Seal returns state sealed for req: for its principal, its tool and its
// arguments, valid for the TTL. Put it in the input_required result's
// RequestState.
func (s *Sealer) Seal(req *mcpkit.Request, state []byte) (string, error) {
	k := s.keys[0]
	nonce := make([]byte, k.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("requeststate: sealing a request state: %w", err)
	}
	plain := make([]byte, 8, 8+len(state))
	binary.BigEndian.PutUint64(plain, uint64(time.Now().Add(s.ttl).Unix()))
	plain = append(plain, state...)

	out := make([]byte, 0, 1+len(k.id)+len(nonce)+len(plain)+k.aead.Overhead())
	out = append(out, stateVersion)
	out = append(out, k.id[:]...)
	out = append(out, nonce...)
	out = k.aead.Seal(out, nonce, plain, binding(req))
	return base64.RawURLEncoding.EncodeToString(out), nil
}

// Open returns the state that the retried call req carries in its
// requestState, if it is one that s sealed for this principal, tool and
// arguments and that has not expired. Otherwise it returns an error that
// wraps ErrInvalid and reaches the client as the JSON-RPC error
// -32602 "invalid request state", whatever the reason. A call without a
// request state gives (nil, nil).
func (s *Sealer) Open(req *mcpkit.Request) ([]byte, error) {
	if req.Call == nil || req.Call.Params == nil || req.Call.Params.RequestState == "" {
		return nil, nil
	}
	state, ok := s.open(req, req.Call.Params.RequestState)
	if !ok {
		return nil, invalidState
	}
	return state, nil
}

func (s *Sealer) open(req *mcpkit.Request, sealed string) ([]byte, bool) {
	data, err := base64.RawURLEncoding.DecodeString(sealed)
	if err != nil || len(data) < 1+4 || data[0] != stateVersion {
		return nil, false
	}
	// One state, one spelling: the decoder skips line breaks and ignores
	// the last character's unused bits, and a store of used states (see
	// middleware.Confirm) keys on the text, so another spelling of a used
	// state must not open.
	if base64.RawURLEncoding.EncodedLen(len(data)) != len(sealed) || base64.RawURLEncoding.EncodeToString(data) != sealed {
		return nil, false
	}
	id, rest := [4]byte(data[1:5]), data[5:]
	for _, k := range s.keys {
		if k.id != id {
			continue
		}
		n := k.aead.NonceSize()
		if len(rest) < n+k.aead.Overhead() {
			return nil, false
		}
		plain, err := k.aead.Open(nil, rest[:n], rest[n:], binding(req))
		if err != nil || len(plain) < 8 {
			return nil, false
		}
		if time.Now().Unix() >= int64(binary.BigEndian.Uint64(plain)) {
			return nil, false // expired
		}
		return plain[8:], true
	}
	return nil, false
}

// binding is what a sealed state is bound to: the principal, the tool's
// identity (its origin's name and version, see [mcpkit.Tool.ID]) and the
// arguments, as authenticated data.
func binding(req *mcpkit.Request) []byte {
	principal := mcpkit.Principal(req)
	id := req.Tool.ID()
	args := sha256.Sum256(req.Arguments)
	b := make([]byte, 0, 3*binary.MaxVarintLen64+len(principal)+len(id.Name)+len(id.Version)+len(args))
	for _, s := range [...]string{principal, id.Name, id.Version} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return append(b, args[:]...)
}

// invalidState is the one answer to every state Open refuses.
var invalidState error = &stateError{wire: &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid request state"}}

type stateError struct{ wire *jsonrpc.Error }

func (e *stateError) Error() string   { return e.wire.Message }
func (e *stateError) Unwrap() []error { return []error{ErrInvalid, e.wire} }
