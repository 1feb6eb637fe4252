package main

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/skills"
)

func registerSkills(t *testing.T, c *mcp.Client) {
	if err := mcp.AddSendingCustomMethod[*skills.ListParams, *skills.ListResult](c, skills.MethodList); err != nil {
		t.Fatal(err)
	}
	if err := mcp.AddSendingCustomMethod[*skills.GetParams, *skills.GetResult](c, skills.MethodGet); err != nil {
		t.Fatal(err)
	}
}

// TestSkills reads the embedded skills as a host does, on each protocol
// era: the extension declared, both skills listed, each got, and every
// file read back with the digest and size its entry publishes.
func TestSkills(t *testing.T) {
	srv, err := newServer(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			ctx := t.Context()
			cs := era.Connect(t, srv, &mcpkittest.Options{ClientSetup: func(c *mcp.Client) { registerSkills(t, c) }}).Session
			if _, ok := cs.InitializeResult().Capabilities.Extensions[skills.ExtensionID]; !ok {
				t.Error("the extension is not declared")
			}
			list, err := mcp.CallCustomMethod[*skills.ListParams, *skills.ListResult](ctx, cs, skills.MethodList, &skills.ListParams{})
			if err != nil {
				t.Fatal(err)
			}
			var uris []string
			for _, e := range list.Skills {
				uris = append(uris, e.URI)
			}
			if got := strings.Join(uris, " "); got != "skill://commit-message/SKILL.md skill://release-notes/SKILL.md" {
				t.Fatalf("skills/list = %s", got)
			}
			if list.TTLMs != 300000 || list.CacheScope != "public" {
				t.Errorf("ttlMs %d, cacheScope %q", list.TTLMs, list.CacheScope)
			}
			for _, uri := range uris {
				got, err := mcp.CallCustomMethod[*skills.GetParams, *skills.GetResult](ctx, cs, skills.MethodGet, &skills.GetParams{URI: uri})
				if err != nil {
					t.Fatal(err)
				}
				if len(got.Skill.Resources.Files) != 2 {
					t.Errorf("%s has %d files; want 2", uri, len(got.Skill.Resources.Files))
				}
				for _, f := range got.Skill.Resources.Files {
					res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: f.URI})
					if err != nil {
						t.Fatal(err)
					}
					data := []byte(res.Contents[0].Text)
					sum := sha256.Sum256(data)
					if d := "sha256:" + hex.EncodeToString(sum[:]); d != f.Digest || int64(len(data)) != f.Size {
						t.Errorf("%s: read %d bytes, %s; the entry says %d, %s", f.URI, len(data), d, f.Size, f.Digest)
					}
				}
			}
		})
	}
}

// TestRunStdio serves over stdin and stdout, as a host launches it.
func TestRunStdio(t *testing.T) {
	ctx := t.Context()
	clientToServer, serverIn := io.Pipe()
	serverOut, serverToClient := io.Pipe()
	done := make(chan error, 1)
	var stderr syncBuilder
	go func() {
		done <- run(ctx, []string{"-stdio"}, clientToServer, serverToClient, &stderr)
		serverToClient.Close()
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil)
	registerSkills(t, client)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: serverOut, Writer: serverIn}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := mcp.CallCustomMethod[*skills.GetParams, *skills.GetResult](ctx, cs, skills.MethodGet, &skills.GetParams{URI: "skill://release-notes/SKILL.md"})
	if err != nil || !strings.Contains(string(got.Skill.Frontmatter), `"name":"release-notes"`) {
		t.Fatalf("skills/get over stdio: %+v, %v", got, err)
	}
	cs.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after the client closed")
	}
	if got := stderr.String(); !strings.HasPrefix(got, "skills: serving MCP on stdin/stdout\n") {
		t.Errorf("stderr = %q", got)
	}
}

// syncBuilder is a strings.Builder safe for concurrent writes and reads.
type syncBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuilder) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuilder) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
