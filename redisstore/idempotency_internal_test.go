package redisstore

import (
	"bytes"
	"testing"
)

// FuzzRecordEncoding checks that a record decodes to what was encoded, and
// that any value, whatever Redis holds under a key, decodes to an error or
// to a record that encodes and decodes to itself.
func FuzzRecordEncoding(f *testing.F) {
	f.Add("token", byte(stateRunning), "fingerprint", []byte(nil))
	f.Add("", byte(stateDone), "", []byte{})
	f.Add(string(make([]byte, 200)), byte(stateDone), string(make([]byte, 70_000)), []byte("result\x00"))
	f.Add("t", byte(7), "f", []byte("r"))
	f.Fuzz(func(t *testing.T, token string, state byte, fingerprint string, result []byte) {
		state %= 2
		if state == stateRunning {
			result = nil
		}
		v := encodeRecord(token, state, fingerprint, result)
		rec, err := decodeRecord(v)
		if err != nil {
			t.Fatalf("decoding an encoded record: %v", err)
		}
		if rec.Token != token || rec.Fingerprint != fingerprint || rec.Done != (state == stateDone) || !bytes.Equal(rec.Result, result) {
			t.Fatalf("decoded %+v, encoded token %q, state %d, fingerprint %q, result %q", rec, token, state, fingerprint, result)
		}
		if running := bytes.HasPrefix([]byte(v), []byte(tokenHead(token))); running != (state == stateRunning) {
			t.Fatalf("record %q (state %d) starting with its token's running head %q: %v", v, state, tokenHead(token), running)
		}

		// The same bytes, as an arbitrary value: an error, or a record
		// that survives encoding (not always to the same bytes: a length
		// may have been encoded in more bytes than needed).
		raw := token + fingerprint + string(result)
		if rec, err := decodeRecord(raw); err == nil {
			state := byte(stateRunning)
			if rec.Done {
				state = stateDone
			}
			again, err := decodeRecord(encodeRecord(rec.Token, state, rec.Fingerprint, rec.Result))
			if err != nil || again.Token != rec.Token || again.Fingerprint != rec.Fingerprint || again.Done != rec.Done || !bytes.Equal(again.Result, rec.Result) {
				t.Fatalf("value %q decodes to %+v, which encodes to a value that decodes to %+v, %v", raw, rec, again, err)
			}
		}
	})
}
