package otelmcp

import (
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpkit/mcpkit"
)

// ScopeName is the instrumentation scope of the tracer and meter.
const ScopeName = "github.com/mcpkit/mcpkit/otelmcp"

// Version is the version of this instrumentation, reported with its scope.
const Version = "0.1.0"

// An Option configures [NewMiddleware].
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	tracerProvider trace.TracerProvider
	meterProvider  metric.MeterProvider
	propagators    propagation.TextMapPropagator
	filters        []func(*mcpkit.Request) bool
	spanName       func(*mcpkit.Request) string
	customName     bool
	arguments      bool
	results        bool
}

func newConfig(opts []Option) *config {
	c := &config{}
	for _, o := range opts {
		if o != nil {
			o.apply(c)
		}
	}
	if c.tracerProvider == nil {
		c.tracerProvider = otel.GetTracerProvider()
	}
	if c.meterProvider == nil {
		c.meterProvider = otel.GetMeterProvider()
	}
	if c.propagators == nil {
		c.propagators = otel.GetTextMapPropagator()
	}
	if c.spanName == nil {
		c.spanName = func(req *mcpkit.Request) string { return "tools/call " + req.Tool.Name }
	}
	return c
}

// WithTracerProvider sets the tracer provider; nil, the default, means the
// global one.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return optionFunc(func(c *config) {
		if tp != nil {
			c.tracerProvider = tp
		}
	})
}

// WithMeterProvider sets the meter provider; nil, the default, means the
// global one.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(c *config) {
		if mp != nil {
			c.meterProvider = mp
		}
	})
}

// WithPropagators sets the propagator that reads the trace context from a
// request's params._meta; nil, the default, means the global one.
func WithPropagators(p propagation.TextMapPropagator) Option {
	return optionFunc(func(c *config) {
		if p != nil {
			c.propagators = p
		}
	})
}

// WithFilter adds a filter: a call is instrumented only if every filter
// returns true for it. Filters run first, before anything is recorded.
func WithFilter(f func(*mcpkit.Request) bool) Option {
	return optionFunc(func(c *config) {
		if f != nil {
			c.filters = append(c.filters, f)
		}
	})
}

// WithSpanNameFormatter sets how a call's span is named; the default is
// "tools/call {tool name}". Names should have a low cardinality.
func WithSpanNameFormatter(f func(*mcpkit.Request) string) Option {
	return optionFunc(func(c *config) {
		if f != nil {
			c.spanName, c.customName = f, true
		}
	})
}

// WithToolCallContent records a call's arguments (gen_ai.tool.call.arguments)
// and, for a successful call, its result (gen_ai.tool.call.result) on the
// span, as JSON. Both are off by default: they may hold personal data or
// secrets.
func WithToolCallContent(arguments, results bool) Option {
	return optionFunc(func(c *config) {
		c.arguments, c.results = arguments, results
	})
}
