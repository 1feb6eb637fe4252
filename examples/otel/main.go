// Command otel is an MCP server built with mcpkit whose tool calls are
// traced and measured with OpenTelemetry (package otelmcp), exported to
// stdout as JSON by the OTel SDK's stdout exporters:
//
//	go run ./examples/otel                    # serves http://127.0.0.1:8081/mcp
//	go run ./examples/otel -addr 127.0.0.1:0  # on a free port
//
// Spans are written as they end; metrics every -interval and when the
// server stops (Ctrl-C or SIGTERM). Logs and the address go to stderr. To
// send the same telemetry to an OTLP collector instead, swap the exporters
// for the otlptracehttp and otlpmetrichttp ones (see docs/observability.md).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/otelmcp"
	"github.com/mcpkit/mcpkit/tools"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "otel:", err)
		os.Exit(1)
	}
}

// run serves until ctx is done, exporting telemetry to stdout.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("otel", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8081", "address to serve streamable HTTP on")
	interval := fs.Duration("interval", 30*time.Second, "how often metrics are exported")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}

	spans, err := stdouttrace.New(stdouttrace.WithWriter(stdout))
	if err != nil {
		return err
	}
	metrics, err := stdoutmetric.New(stdoutmetric.WithWriter(stdout))
	if err != nil {
		return err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(metrics, sdkmetric.WithInterval(*interval))))
	defer func() {
		// Flush what is left: the last spans and metrics.
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		tp.Shutdown(shutdown)
		mp.Shutdown(shutdown)
	}()

	srv, err := newServer(slog.New(slog.NewTextHandler(stderr, nil)),
		otelmcp.WithTracerProvider(tp),
		otelmcp.WithMeterProvider(mp),
		otelmcp.WithPropagators(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})))
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv.HTTPHandler(nil))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stderr, "otel: serving MCP on http://%s/mcp\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := hs.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return nil
	}
}

// Forecast is the result of the weather tool.
type Forecast struct {
	City  string  `json:"city"`
	TempC float64 `json:"tempC"`
}

// newServer returns the example's server: the instrumentation outermost,
// then the recommended chain, and one tool.
func newServer(logger *slog.Logger, opts ...otelmcp.Option) (*mcpkit.Server, error) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "mcpkit-otel", Version: "0.1.0"}, &mcpkit.ServerOptions{Logger: logger})
	otelmcp.Instrument(srv, opts...) // tools/call (outermost), tools/list and every other method
	srv.Use(middleware.Recommended(&middleware.RecommendedOptions{Logger: logger}))
	weather, err := tools.New("weather", func(ctx context.Context, in struct {
		City string `json:"city" description:"The city to forecast." minLength:"1"`
	}) (Forecast, error) {
		if in.City == "Atlantis" {
			return Forecast{}, mcpkit.ToolErrorf("no forecast for %q", in.City)
		}
		return Forecast{City: in.City, TempC: 21.5}, nil
	}, &tools.Options{Description: "Tomorrow's temperature in a city."})
	if err != nil {
		return nil, err
	}
	return srv, srv.Add(weather)
}
