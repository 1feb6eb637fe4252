# Reads `go test -bench` output of a floor benchmark (sub-benchmarks named
# Bench/<mode>/<tool>/<server>) and prints, per mode/tool and server, the
# median ns/op, cpu-ns/op, B/op and allocs/op of the runs, each with its
# ratio to the server named first in `order`. Used by floor.sh and
# floor-mcpgo.sh:
#
#   awk -v bench=BenchmarkFloor -v order="sdk-raw mcpkit" -f scripts/floor-table.awk
$1 ~ "^" bench "/" {
	split($1, p, "/"); sub(/-[0-9]+$/, "", p[4])
	key = p[2] "/" p[3] "/" p[4]
	n[key]++
	for (i = 3; i < NF; i += 2) {
		if ($(i + 1) == "ns/op") ns[key, n[key]] = $i
		if ($(i + 1) == "cpu-ns/op") cpu[key, n[key]] = $i
		if ($(i + 1) == "B/op") by[key, n[key]] = $i
		if ($(i + 1) == "allocs/op") al[key, n[key]] = $i
	}
	keys[key] = 1; group[p[2] "/" p[3]] = 1
}
function median(a, k, m,    v, i, j, t) {
	for (i = 1; i <= m; i++) v[i] = a[k, i]
	for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
	return (m % 2) ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
}
END {
	m = split(order, servers, " ")
	printf "%-22s %-20s %12s %7s %10s %7s %10s %7s %8s %7s\n", "mode/tool", "server", "ns/op", "x", "cpu-ns/op", "x", "B/op", "x", "allocs", "x"
	for (g in group) {
		base = g "/" servers[1]
		bns = median(ns, base, n[base]); bcpu = median(cpu, base, n[base]); bby = median(by, base, n[base]); bal = median(al, base, n[base])
		for (i = 1; i <= m; i++) {
			k = g "/" servers[i]
			if (!(k in keys)) continue
			mns = median(ns, k, n[k]); mcpu = median(cpu, k, n[k]); mby = median(by, k, n[k]); mal = median(al, k, n[k])
			printf "%-22s %-20s %12.0f %7.2f %10.0f %7.2f %10.0f %7.2f %8.0f %7.2f\n", g, servers[i], mns, mns / bns, mcpu, (bcpu ? mcpu / bcpu : 0), mby, mby / bby, mal, mal / bal
		}
	}
}
