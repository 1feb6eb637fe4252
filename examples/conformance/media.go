package main

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"
)

// media holds the binary payloads the conformance scenarios ask for. They are
// made once, when the server is built, and shared read-only by every call.
type media struct {
	png []byte // a 1x1 red PNG
	wav []byte // a short WAV of silence
}

func newMedia() (*media, error) {
	img := image.NewRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.RGBA{R: 0xff, A: 0xff})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, err
	}
	return &media{png: buf.Bytes(), wav: silentWAV(8000, 80)}, nil
}

// silentWAV returns a mono, 16-bit PCM WAV file of n silent samples at rate
// samples per second: the canonical 44-byte RIFF header and zeroed data.
func silentWAV(rate, n uint32) []byte {
	const (
		channels      = 1
		bitsPerSample = 16
		blockAlign    = channels * bitsPerSample / 8
	)
	dataLen := n * blockAlign
	b := make([]byte, 0, 44+dataLen)
	b = append(b, "RIFF"...)
	b = binary.LittleEndian.AppendUint32(b, 36+dataLen)
	b = append(b, "WAVEfmt "...)
	b = binary.LittleEndian.AppendUint32(b, 16) // size of the fmt chunk
	b = binary.LittleEndian.AppendUint16(b, 1)  // PCM
	b = binary.LittleEndian.AppendUint16(b, channels)
	b = binary.LittleEndian.AppendUint32(b, rate)
	b = binary.LittleEndian.AppendUint32(b, rate*blockAlign) // bytes per second
	b = binary.LittleEndian.AppendUint16(b, blockAlign)
	b = binary.LittleEndian.AppendUint16(b, bitsPerSample)
	b = append(b, "data"...)
	b = binary.LittleEndian.AppendUint32(b, dataLen)
	return append(b, make([]byte, dataLen)...)
}
