package main

import (
	"crypto/rand"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/requeststate"
	"github.com/mcpkit/mcpkit/tasks"
)

// options configures newServer. The zero value is usable: nothing is logged,
// the tools do not pause between notifications and calls have no time limit.
type options struct {
	// logger receives one record per tool call, the real text of masked
	// errors, the stacks of panics, and the server's own records. Nil
	// discards them.
	logger *slog.Logger

	// pause is the delay between the notifications of the logging and
	// progress tools, and before the reconnection tool answers. The suite's
	// scenarios describe about 50ms, so that a client sees notifications
	// arrive while the call is still running.
	pause time.Duration

	// callTimeout bounds one tool call; zero means no limit.
	callTimeout time.Duration
}

// newServer returns the conformance server: the scenarios' tools,
// resources, prompts and completions served by mcpkit, the tools behind
// the server-wide middleware; subscriptions are the SDK's.
func newServer(opts options) (*mcpkit.Server, error) {
	logger := opts.logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	md, err := newMedia()
	if err != nil {
		return nil, err
	}
	caps := &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}}
	caps.AddExtension(tasks.ExtensionID, map[string]any{})
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "mcpkit-conformance", Version: "0.1.0"}, &mcpkit.ServerOptions{
		Logger: logger,
		// Clients driven by models send "10" for 10; coerce what the
		// schema makes unambiguous.
		Validation: mcpkit.Lenient,
		SDKOptions: &mcp.ServerOptions{
			// The suite checks client logging, which 2026-07-28 deprecates
			// and mcpkit does not advertise by default, and the tasks
			// extension.
			Capabilities: caps,
			Logger:       logger,
		},
	})
	srv.Use(serverMiddleware(logger, opts)...)
	// The json-schema-2020-12 scenario checks that $defs, $schema and
	// additionalProperties arrive as registered, so that tool's schema is
	// advertised verbatim; every other schema is advertised without $ref,
	// for clients that cannot follow one.
	srv.UseList(middleware.Deref(&middleware.DerefOptions{
		Skip:   func(t *mcpkit.Tool) bool { return t.HasTag(tagVerbatimSchema) },
		Logger: logger,
	}))
	// One process serves the suite, so a key made at start will do;
	// replicas would share keys from their configuration.
	key := make([]byte, requeststate.MinKeyLen)
	rand.Read(key) // never fails
	sealer, err := requeststate.New([][]byte{key}, nil)
	if err != nil {
		return nil, err
	}
	if err := srv.Add(newToolkit(md, opts.pause, sealer).tools()...); err != nil {
		return nil, err
	}
	if err := srv.Add(newListChanger(srv).tools()...); err != nil {
		return nil, err
	}
	// The tasks extension: one process, so the in-memory store will do.
	tm := tasks.NewManager(&tasks.Options{PollInterval: 200 * time.Millisecond, Logger: logger})
	if err := tm.Attach(srv); err != nil {
		return nil, err
	}
	if err := srv.Add(taskTools(tm)...); err != nil {
		return nil, err
	}
	if err := addResources(srv, md); err != nil {
		return nil, err
	}
	if err := addPrompts(srv, md); err != nil {
		return nil, err
	}
	if err := serveSkills(srv); err != nil {
		return nil, err
	}
	return srv, nil
}

// serverMiddleware returns the server-wide chain, outermost first, in the
// order the middleware package recommends: Logging outermost, so that its
// record covers calls the inner layers reject or mask; Recover outside
// everything that can panic, Timeout's re-raised panics included; MaskErrors
// outside every layer that returns errors. The server itself validates
// arguments innermost, so the time limit covers validation too.
func serverMiddleware(logger *slog.Logger, opts options) []mcpkit.Middleware {
	mw := []mcpkit.Middleware{
		middleware.Logging(&middleware.LoggingOptions{Logger: logger}),
		middleware.Recover(nil),
		middleware.MaskErrors(nil),
	}
	if opts.callTimeout > 0 {
		mw = append(mw, middleware.Timeout(opts.callTimeout, &middleware.TimeoutOptions{Logger: logger}))
	}
	return mw
}
