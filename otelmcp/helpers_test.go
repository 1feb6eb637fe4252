package otelmcp_test

import (
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

func noopMeter() metric.MeterProvider { return noop.NewMeterProvider() }
