#!/usr/bin/env bash
# Compares Talaria's throughput with its floor on this machine.
#
#   scripts/floor-ratio.sh [PAIRS]
#
# Builds the test binaries of internal/embedded (BenchmarkThroughputFloor:
# the same workflows on the same embedded server with no Talaria code) and
# internal/engine (BenchmarkThroughput) from the working tree, then runs the
# two alternately PAIRS times (default 6), each in its own process, and
# prints every pair's wall time and process CPU with Talaria's ratio to the
# floor, then the median ratios. One pair is about 40 s on 2 cores.
#
# Alternate runs share the machine's moods: on a machine whose load moves,
# one binary's CPU for the same work varies by a third between runs, so a
# single pair decides nothing and the median of several does.
set -euo pipefail

pairs=${1:-6}
if ! [[ $pairs =~ ^[1-9][0-9]*$ ]]; then
	echo "usage: $0 [PAIRS] (a positive number of pairs)" >&2
	exit 2
fi
export LC_ALL=C

root=$(cd "$(dirname "$0")/.." && pwd)
export GOTOOLCHAIN=${GOTOOLCHAIN:-go1.27.3} CGO_ENABLED=0 GOFLAGS="-buildvcs=false -trimpath"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "floor-ratio: building the two benchmark binaries..." >&2
(cd "$root" && go test -c -o "$tmp/floor.test" ./internal/embedded && go test -c -o "$tmp/talaria.test" ./internal/engine)

# run BINARY DIR BENCH prints "WALL CPU" of one run of BENCH.
run() {
	local out
	out=$(cd "$2" && "$1" -test.run '^$' -test.bench "^$3\$" -test.benchtime 1x 2>&1) || {
		echo "$out" >&2
		echo "floor-ratio: $3 failed" >&2
		return 1
	}
	echo "$out" | awk -v b="$3" '$1 ~ "^"b"(-[0-9]+)?$" {
		for (i = 2; i < NF; i++) { if ($(i+1) == "s/wall") w = $i; if ($(i+1) == "cpu-s") c = $i }
	} END { if (w == "" || c == "" || w + 0 <= 0 || c + 0 <= 0) exit 1; print w, c }' || {
		echo "$out" >&2
		echo "floor-ratio: $3 reported no positive s/wall and cpu-s" >&2
		return 1
	}
}

echo "| pair | floor wall s | floor CPU s | Talaria wall s | Talaria CPU s | wall ratio | CPU ratio |"
echo "|---|---|---|---|---|---|---|"
ratios=()
for i in $(seq 1 "$pairs"); do
	echo "floor-ratio: pair $i of $pairs..." >&2
	floor=$(run "$tmp/floor.test" "$root/internal/embedded" BenchmarkThroughputFloor)
	talaria=$(run "$tmp/talaria.test" "$root/internal/engine" BenchmarkThroughput)
	read -r fw fc <<<"$floor"
	read -r tw tc <<<"$talaria"
	awk -v fw="$fw" -v fc="$fc" -v tw="$tw" -v tc="$tc" -v i="$i" 'BEGIN {
		printf "| %d | %.2f | %.2f | %.2f | %.2f | %.3f | %.3f |\n", i, fw, fc, tw, tc, tw/fw, tc/fc }'
	ratios+=("$(awk -v fw="$fw" -v tw="$tw" -v fc="$fc" -v tc="$tc" 'BEGIN { printf "%.4f %.4f", tw/fw, tc/fc }')")
done
# median COLUMN prints the median of one column of the ratios.
median() {
	printf '%s\n' "${ratios[@]}" | cut -d' ' -f"$1" | sort -n | awk '{ v[NR] = $1 } END {
		printf "%.3f", (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2 }'
}
echo
echo "median of $pairs pairs: wall $(median 1)x, CPU $(median 2)x of the floor"
