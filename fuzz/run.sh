#!/bin/sh
# Builds the libFuzzer targets with clang straight from the library sources they exercise and
# runs each for a bounded time. Usage: fuzz/run.sh [SECONDS] (default 20 per target).
# Environment: FUZZ_OUT (build and corpus directory, default build-fuzz).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-20}
out=${FUZZ_OUT:-$root/build-fuzz}
mkdir -p "$out"
flags="-g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -I$root/src"
clang $flags -o "$out/fuzz_perf_record" "$root/fuzz/fuzz_perf_record.c" \
	"$root/src/perf_sample.c" "$root/src/perf_ring.c"
clang $flags -o "$out/fuzz_perf_data" "$root/fuzz/fuzz_perf_data.c" \
	"$root/src/perf_data.c" "$root/src/perf_sample.c" -lzstd

# Seeds: the head of the shared real recording, when present, for the file reader.
mkdir -p "$out/corpus_record" "$out/corpus_data"
real=/work/shared/data/perf/pebs-skx-loadlat-weight-struct.data
if [ -r "$real" ] && [ ! -e "$out/corpus_data/real-head" ]; then
	head -c 65536 "$real" > "$out/corpus_data/real-head"
fi
if command -v perf >/dev/null 2>&1 && [ ! -e "$out/corpus_data/page-faults" ]; then
	perf record -q -e page-faults -c 1 -d -o "$out/corpus_data/page-faults" -- true \
		>/dev/null 2>&1 || rm -f "$out/corpus_data/page-faults"
fi
for t in record data; do
	echo "fuzz: fuzz_perf_$t for ${secs}s"
	"$out/fuzz_perf_$t" -max_total_time="$secs" -max_len=65536 -print_final_stats=1 \
		"$out/corpus_$t" 2>"$out/fuzz_perf_$t.log" || { tail -40 "$out/fuzz_perf_$t.log"; exit 1; }
	grep -E "stat::number_of_executed_units|Done" "$out/fuzz_perf_$t.log" | tail -1
done
