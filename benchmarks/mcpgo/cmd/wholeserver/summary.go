package main

import (
	"fmt"
	"io"
	"slices"
)

// median returns the median of xs, which it sorts; 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// printSummary prints, per mode and tool, each server's medians over the
// rounds (CPU with its lowest and highest round), over HTTP and at the
// handler's floor, then each ratio asked for: the ratio of the medians, and
// the lowest and highest of the ratios taken round by round (both servers
// measured in the same round).
func printSummary(w io.Writer, samples []sample, ms []mode, ts []string, labels []string, ratios [][2]string) {
	type key struct{ mode, tool, server string }
	byKey := map[key][]sample{}
	for _, s := range samples {
		k := key{s.mode, s.tool, s.server}
		byKey[k] = append(byKey[k], s)
	}
	field := func(ss []sample, f func(sample) float64) []float64 {
		xs := make([]float64, len(ss))
		for i, s := range ss {
			xs[i] = f(s)
		}
		return xs
	}
	cpu := func(s sample) float64 { return s.cpuNs }
	alloc := func(s sample) float64 { return s.bytes }
	floorCPU := func(s sample) float64 { return s.floorCPUNs }
	floorAlloc := func(s sample) float64 { return s.floorBytes }

	fmt.Fprintf(w, "Server process cost per tools/call, medians of %d rounds (CPU: lowest-highest round)\n\n", len(samples)/max(1, len(byKey)))
	fmt.Fprintln(w, "| mode | tool | server | CPU µs/call | CPU range | floor CPU µs | beyond the floor µs | KB/call | floor KB | allocs/call | GCs per 1k calls | wall µs/call |")
	fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, m := range ms {
		for _, t := range ts {
			for _, l := range labels {
				ss := byKey[key{m.name, t, l}]
				if len(ss) == 0 {
					continue
				}
				c := field(ss, cpu)
				med := median(c)
				floor := median(field(ss, floorCPU))
				fmt.Fprintf(w, "| %s | %s | %s | %.0f | %.0f-%.0f | %.0f | %.0f | %.1f | %.1f | %.0f | %.1f | %.0f |\n", m.name, t, l,
					med/1e3, c[0]/1e3, c[len(c)-1]/1e3, floor/1e3, (med-floor)/1e3,
					median(field(ss, alloc))/1e3, median(field(ss, floorAlloc))/1e3,
					median(field(ss, func(s sample) float64 { return s.objects })),
					median(field(ss, func(s sample) float64 { return s.gcCyclesPerKCall })),
					median(field(ss, func(s sample) float64 { return s.wallNs }))/1e3)
			}
		}
	}
	if len(ratios) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Ratios A/B (above 1: A spends more): of the medians, and the lowest-highest of the per-round ratios")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| mode | tool | A/B | CPU | CPU range | KB | KB range | floor CPU | floor CPU range | floor KB |")
	fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, m := range ms {
		for _, t := range ts {
			for _, r := range ratios {
				a, b := byKey[key{m.name, t, r[0]}], byKey[key{m.name, t, r[1]}]
				if len(a) == 0 || len(b) == 0 {
					continue
				}
				cpuLo, cpuHi := perRound(a, b, cpu)
				kbLo, kbHi := perRound(a, b, alloc)
				floorLo, floorHi := perRound(a, b, floorCPU)
				fmt.Fprintf(w, "| %s | %s | %s/%s | %.2f | %.2f-%.2f | %.2f | %.2f-%.2f | %.2f | %.2f-%.2f | %.2f |\n", m.name, t, r[0], r[1],
					median(field(a, cpu))/median(field(b, cpu)), cpuLo, cpuHi,
					median(field(a, alloc))/median(field(b, alloc)), kbLo, kbHi,
					median(field(a, floorCPU))/median(field(b, floorCPU)), floorLo, floorHi,
					median(field(a, floorAlloc))/median(field(b, floorAlloc)))
			}
		}
	}
}

// perRound returns the lowest and highest ratio f(a)/f(b) over the rounds
// that measured both.
func perRound(a, b []sample, f func(sample) float64) (lo, hi float64) {
	first := true
	for _, x := range a {
		for _, y := range b {
			if x.round != y.round || f(y) == 0 {
				continue
			}
			r := f(x) / f(y)
			if first || r < lo {
				lo = r
			}
			if first || r > hi {
				hi = r
			}
			first = false
		}
	}
	return lo, hi
}
