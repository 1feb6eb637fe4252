package tools

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Text returns a text content block.
func Text(s string) *mcp.TextContent { return &mcp.TextContent{Text: s} }

// Image returns an image content block holding data, an image of the given
// MIME type ("image/png"). The SDK base64-encodes data on the wire.
func Image(data []byte, mimeType string) *mcp.ImageContent {
	return &mcp.ImageContent{Data: data, MIMEType: mimeType}
}

// ImageFile reads the image at path and returns it as an image content
// block. Its MIME type comes from the file name's extension or, failing
// that, from its first bytes; ImageFile fails if neither says image.
func ImageFile(path string) (*mcp.ImageContent, error) {
	data, mimeType, err := readMedia(path, "image/")
	if err != nil {
		return nil, err
	}
	return Image(data, mimeType), nil
}

// Audio returns an audio content block holding data, audio of the given
// MIME type ("audio/wav").
func Audio(data []byte, mimeType string) *mcp.AudioContent {
	return &mcp.AudioContent{Data: data, MIMEType: mimeType}
}

// AudioFile reads the audio file at path and returns it as an audio content
// block, with its MIME type found as [ImageFile] finds it.
func AudioFile(path string) (*mcp.AudioContent, error) {
	data, mimeType, err := readMedia(path, "audio/")
	if err != nil {
		return nil, err
	}
	return Audio(data, mimeType), nil
}

// File returns an embedded resource holding data as a binary blob, under
// uri, with the given MIME type (empty if unknown).
func File(uri string, data []byte, mimeType string) *mcp.EmbeddedResource {
	if data == nil {
		data = []byte{} // an empty file, not a missing blob
	}
	return &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: uri, MIMEType: mimeType, Blob: data}}
}

// FileFromPath reads the file at path and returns it as an embedded
// resource with a file:// URI and the MIME type of its extension or its
// first bytes.
func FileFromPath(path string) (*mcp.EmbeddedResource, error) {
	data, mimeType, err := readMedia(path, "")
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("tools: %w", err)
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	return File(u.String(), data, mimeType), nil
}

// TextResource returns an embedded resource holding text under uri, with
// the given MIME type ("text/plain", "application/json", ...).
func TextResource(uri, mimeType, text string) *mcp.EmbeddedResource {
	return &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: uri, MIMEType: mimeType, Text: text}}
}

// ResourceLink returns a link to a resource the client may read with
// resources/read, rather than the resource itself.
func ResourceLink(uri, name string) *mcp.ResourceLink {
	return &mcp.ResourceLink{URI: uri, Name: name}
}

// Annotate sets the annotations of content block c (who it is for, how
// important it is) and returns c. The annotations are shared, not copied.
func Annotate[C mcp.Content](c C, a *mcp.Annotations) C {
	switch v := any(c).(type) {
	case *mcp.TextContent:
		v.Annotations = a
	case *mcp.ImageContent:
		v.Annotations = a
	case *mcp.AudioContent:
		v.Annotations = a
	case *mcp.EmbeddedResource:
		v.Annotations = a
	case *mcp.ResourceLink:
		v.Annotations = a
	}
	return c
}

// ForAudience returns annotations saying which roles a content block is
// meant for ("user", "assistant") and its priority, from 0 (optional) to 1
// (required).
func ForAudience(priority float64, audience ...mcp.Role) *mcp.Annotations {
	return &mcp.Annotations{Audience: audience, Priority: priority}
}

// mediaTypes maps file extensions to MIME types for the media MCP carries;
// the standard library's table has no audio types and depends on the host.
var mediaTypes = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
	".webp": "image/webp", ".svg": "image/svg+xml", ".bmp": "image/bmp", ".ico": "image/x-icon",
	".tif": "image/tiff", ".tiff": "image/tiff", ".avif": "image/avif", ".heic": "image/heic",
	".wav": "audio/wav", ".mp3": "audio/mpeg", ".ogg": "audio/ogg", ".oga": "audio/ogg",
	".opus": "audio/opus", ".flac": "audio/flac", ".m4a": "audio/mp4", ".aac": "audio/aac",
	".weba": "audio/webm",
	".pdf":  "application/pdf", ".json": "application/json", ".txt": "text/plain",
	".md": "text/markdown", ".csv": "text/csv", ".html": "text/html", ".xml": "application/xml",
	".zip": "application/zip", ".gz": "application/gzip",
}

// readMedia reads path and finds its MIME type, which must start with want
// (if want is not empty).
func readMedia(path, want string) ([]byte, string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("tools: %w", err)
	}
	mimeType := mediaTypes[strings.ToLower(filepath.Ext(path))]
	if mimeType == "" || want != "" && !strings.HasPrefix(mimeType, want) {
		mimeType, _, _ = strings.Cut(http.DetectContentType(data), ";")
		if mimeType == "audio/wave" {
			mimeType = "audio/wav"
		}
	}
	if want != "" && !strings.HasPrefix(mimeType, want) {
		return nil, "", fmt.Errorf("tools: %s does not look like %s* (found %s); pass the data and its MIME type instead", path, want, mimeType)
	}
	return data, mimeType, nil
}
