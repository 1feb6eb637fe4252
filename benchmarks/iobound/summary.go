package main

import (
	"fmt"
	"io"
	"slices"
	"time"
)

// baseline is the server the ratios divide by.
const baseline = "go-sdk"

// summarize prints, for each mode, the medians over the rounds of each
// server's sample, and each server's ratios to the go-sdk's, taken within a
// round and then the median over the rounds.
func summarize(w io.Writer, c config, samples []sample) {
	loads := make([]float64, 0, len(samples))
	for _, s := range samples {
		loads = append(loads, s.load1)
	}
	fmt.Fprintf(w, "\nmedians of %d rounds; ratios to %s within each round, then their median; load average (1 min) %.1f-%.1f during the samples\n",
		c.rounds, baseline, slices.Min(loads), slices.Max(loads))
	for _, m := range c.modes {
		fmt.Fprintf(w, "\n%s\n\n", m.name)
		fmt.Fprintln(w, "| server | requests/s | tool calls/s | p50 ms | p99 ms | CPU µs/call | peak RSS MB | requests/s ÷ go-sdk | CPU/call ÷ go-sdk | errors |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
		for _, impl := range c.servers {
			mine := pick(samples, m.name, impl)
			base := pick(samples, m.name, baseline)
			errs := 0
			for _, s := range mine {
				errs += s.errors
			}
			fmt.Fprintf(w, "| %s | %.0f | %.0f | %.2f | %.2f | %.0f | %.1f | %s | %s | %d |\n", impl,
				median(mine, sample.requestsPerSec), median(mine, sample.callsPerSec),
				ms(median(mine, func(s sample) float64 { return float64(s.p50) })),
				ms(median(mine, func(s sample) float64 { return float64(s.p99) })),
				median(mine, sample.cpuPerCall)/1e3,
				median(mine, func(s sample) float64 { return float64(s.peakRSS) })/(1<<20),
				ratio(mine, base, sample.requestsPerSec), ratio(mine, base, sample.cpuPerCall), errs)
		}
	}
}

func ms(ns float64) float64 { return ns / float64(time.Millisecond) }

// pick returns the samples of one mode and server.
func pick(samples []sample, mode, server string) []sample {
	var out []sample
	for _, s := range samples {
		if s.mode == mode && s.server == server {
			out = append(out, s)
		}
	}
	return out
}

// median returns the median of f over ss.
func median(ss []sample, f func(sample) float64) float64 {
	vs := make([]float64, len(ss))
	for i, s := range ss {
		vs[i] = f(s)
	}
	return medianOf(vs)
}

func medianOf(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	vs = slices.Clone(vs)
	slices.Sort(vs)
	n := len(vs)
	if n%2 == 1 {
		return vs[n/2]
	}
	return (vs[n/2-1] + vs[n/2]) / 2
}

// ratio returns the median over the rounds of f(a)/f(b), with its range, or
// "-" when no round has both.
func ratio(a, b []sample, f func(sample) float64) string {
	var rs []float64
	for _, x := range a {
		for _, y := range b {
			if x.round == y.round && f(y) != 0 {
				rs = append(rs, f(x)/f(y))
			}
		}
	}
	if len(rs) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f (%.2f-%.2f)", medianOf(rs), slices.Min(rs), slices.Max(rs))
}
