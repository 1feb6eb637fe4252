package main

import (
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/transform"
)

var profiles = []transform.Profile{transform.AllProviders, transform.Gemini, transform.OpenAIStrict}

// TestPortable checks that every model provider takes the quickstart's
// tools once the server rewrites them with transform.Portable, as clients
// list them, and that the tools still answer.
func TestPortable(t *testing.T) {
	for _, p := range profiles {
		t.Run(p.String(), func(t *testing.T) {
			srv, err := newServer(slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			if err := srv.Transform(transform.Portable(p, nil)); err != nil {
				t.Fatal(err)
			}
			ts := mcpkittest.NewInMemoryServer(t, srv, nil)
			res, err := ts.Session.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Tools) != 3 {
				t.Fatalf("%d tools listed", len(res.Tools))
			}
			for _, pb := range transform.CheckPortable(p, res.Tools...) {
				t.Error(pb)
			}

			call, err := ts.CallTool(t.Context(), "add", map[string]any{"a": 2, "b": 3.5})
			if err != nil || call.IsError || text(t, call) != `{"sum":5.5}` {
				t.Errorf("add: %+v, %v", call, err)
			}
			// The tools' objects are closed; Gemini cannot say so, and
			// the server still refuses what the tool does not take.
			call, err = ts.CallTool(t.Context(), "add", map[string]any{"a": 2, "b": 3.5, "c": 1})
			if err != nil || !call.IsError || !strings.Contains(text(t, call), "c") {
				t.Errorf("add with c: %+v, %v", call, err)
			}
		})
	}
}

// TestPortableRaw records what the quickstart's tools, as written, break:
// the go-sdk's additionalProperties: false, which Gemini refuses. OpenAI's
// strict mode takes them as they are.
func TestPortableRaw(t *testing.T) {
	srv, err := newServer(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ts := mcpkittest.NewInMemoryServer(t, srv, nil)
	res, err := ts.Session.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[transform.Profile][]string{
		transform.AllProviders: {
			`add: /additionalProperties: AllProviders does not take "additionalProperties"`,
			`divide: /additionalProperties: AllProviders does not take "additionalProperties"`,
			`word_count: /additionalProperties: AllProviders does not take "additionalProperties"`,
		},
		transform.Gemini: {
			`add: /additionalProperties: Gemini does not take "additionalProperties"`,
			`divide: /additionalProperties: Gemini does not take "additionalProperties"`,
			`word_count: /additionalProperties: Gemini does not take "additionalProperties"`,
		},
		transform.OpenAIStrict: nil,
	}
	for _, p := range profiles {
		var got []string
		for _, pb := range transform.CheckPortable(p, res.Tools...) {
			got = append(got, pb.String())
		}
		if !slices.Equal(got, want[p]) {
			t.Errorf("%v: the raw catalog breaks\n%s\nwant\n%s", p, strings.Join(got, "\n"), strings.Join(want[p], "\n"))
		}
	}
}
