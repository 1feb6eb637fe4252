package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
)

// options configures newServer. The zero value is usable: nothing is logged,
// the tools do not pause between notifications and calls have no time limit.
type options struct {
	// logger receives one record per tool call, and the server's own
	// records. Nil discards them.
	logger *slog.Logger

	// pause is the delay between the notifications of the logging and
	// progress tools, and before the reconnection tool answers. The suite's
	// scenarios describe about 50ms, so that a client sees notifications
	// arrive while the call is still running.
	pause time.Duration

	// callTimeout bounds one tool call; zero means no limit.
	callTimeout time.Duration
}

// newServer returns the conformance server: the scenarios' tools as mcpkit
// tools behind the server-wide middleware, and their resources, prompts,
// completions and subscriptions registered on the SDK server directly, since
// mcpkit only deals with tools.
func newServer(opts options) (*mcpkit.Server, error) {
	logger := opts.logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	m, err := newMedia()
	if err != nil {
		return nil, err
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "mcpkit-conformance", Version: "0.1.0"}, &mcpkit.ServerOptions{
		Logger: logger,
		SDKOptions: &mcp.ServerOptions{
			Logger:            logger,
			CompletionHandler: complete,
			// Subscriptions are tracked by the SDK; the handlers only make
			// the server advertise resources.subscribe.
			SubscribeHandler: func(ctx context.Context, req *mcp.SubscribeRequest) error {
				logger.DebugContext(ctx, "resource subscribed", "uri", req.Params.URI)
				return nil
			},
			UnsubscribeHandler: func(ctx context.Context, req *mcp.UnsubscribeRequest) error {
				logger.DebugContext(ctx, "resource unsubscribed", "uri", req.Params.URI)
				return nil
			},
		},
	})
	srv.Use(serverMiddleware(logger, opts)...)
	if err := srv.Add(newToolkit(m, opts.pause).tools()...); err != nil {
		return nil, err
	}
	addResources(srv.MCPServer(), m)
	addPrompts(srv.MCPServer(), m)
	return srv, nil
}

// serverMiddleware returns the server-wide chain, outermost first. New
// middleware goes here: input validation and $ref dereferencing belong after
// logCalls, so that the calls they reject are logged too, and before
// limitDuration, whose clock should time the handler only.
func serverMiddleware(logger *slog.Logger, opts options) []mcpkit.Middleware {
	mw := []mcpkit.Middleware{logCalls(logger)}
	if opts.callTimeout > 0 {
		mw = append(mw, limitDuration(opts.callTimeout))
	}
	return mw
}

// logCalls returns a middleware that logs each call's tool, duration and
// outcome to logger at level Info. It belongs first in the chain, so that it
// times, and sees the errors of, everything inside it; it sees the Go error a
// handler returned, before the server turns it into a result.
func logCalls(logger *slog.Logger) mcpkit.Middleware {
	return func(next mcpkit.Handler) mcpkit.Handler {
		return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			start := time.Now()
			res, err := next.CallTool(ctx, req)
			attrs := []slog.Attr{
				slog.String("tool", req.Tool.Name),
				slog.Duration("duration", time.Since(start)),
			}
			switch {
			case err != nil:
				attrs = append(attrs, slog.String("outcome", "error"), slog.String("error", err.Error()))
			case res != nil && res.IsError:
				attrs = append(attrs, slog.String("outcome", "error result"))
			default:
				attrs = append(attrs, slog.String("outcome", "ok"))
			}
			logger.LogAttrs(ctx, slog.LevelInfo, "tool call", attrs...)
			return res, err
		})
	}
}

// limitDuration returns a middleware that cancels a call's context after d.
// A call that fails once its time is up gets a fatal tool error naming the
// tool and the limit, in place of whatever its handler made of the
// cancellation. It belongs last among the server-wide middleware, next to the
// handler it times.
func limitDuration(d time.Duration) mcpkit.Middleware {
	return func(next mcpkit.Handler) mcpkit.Handler {
		return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			ctx, cancel := context.WithTimeout(ctx, d)
			defer cancel()
			res, err := next.CallTool(ctx, req)
			if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, mcpkit.FatalError(fmt.Errorf("tool %q did not finish within %v: %w", req.Tool.Name, d, context.DeadlineExceeded))
			}
			return res, err
		})
	}
}
