#!/bin/bash
# Builds the libFuzzer targets with clang straight from the library sources they exercise and
# runs each for a bounded time, starting from what earlier runs learned.
#
# Usage: fuzz/run.sh [SECONDS]          run each target SECONDS (default 20), random seed
#        fuzz/run.sh --ci               the gate of make test: each target a fixed number of
#                                       inputs from seed 1 (the same run every time: a gate
#                                       that passed passes again; exploring is the timed run's)
#        fuzz/run.sh --update-seeds [SECONDS]
#                                       run, then merge the run's corpus into the committed
#                                       seeds (only inputs that add coverage), to commit
# Environment: FUZZ_OUT (build and working corpus directory, default build-fuzz).
#
# Targets and their committed seed corpora (fuzz/seeds/<target>/):
#   fuzz_perf_record  one perf ring record through the sample parser
#   fuzz_perf_data    a perf.data file (file, pipe, v1, zstd) through the reader
#   fuzz_config       a configuration file through libconfig and pghotd's validation; every
#                     error must name file:line, and an accepted file's printout must reload
#                     to the same configuration
#   fuzz_procfs       another process's /proc file (stat, maps, numa_maps, statm, cgroup) through
#                     the readers and the DAMON source's first cut of its VMAs
#   fuzz_damon_event  the damon_aggregated tracepoint's format file and a record decoded
#                     with it: a parsed format keeps its fields within the size it demands
#   fuzz_status       a stats file through pghotd --status: the exposition-format parser,
#                     the snapshot and the view, whose label bytes must all print
# Each target reads its working corpus (FUZZ_OUT/corpus_<target>, new inputs go there) and the
# committed seeds. The perf.data reader also starts from the head of the real PEBS recording
# in tests/data/.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
update=0 ci=0
case ${1:-} in
--update-seeds) update=1; shift ;;
--ci) ci=1; shift ;;
esac
secs=${1:-20}
out=${FUZZ_OUT:-$root/build-fuzz}
mkdir -p "$out"
flags="-g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -I$root/src"
clang $flags -o "$out/fuzz_perf_record" "$root/fuzz/fuzz_perf_record.c" \
	"$root/src/sources/perf/perf_sample.c" "$root/src/sources/perf/perf_ring.c"
clang $flags -o "$out/fuzz_perf_data" "$root/fuzz/fuzz_perf_data.c" \
	"$root/src/sources/perf/perf_data.c" "$root/src/sources/perf/perf_sample.c" "$root/src/base/fileio.c" -lzstd
clang $flags -o "$out/fuzz_config" "$root/fuzz/fuzz_config.c" \
	"$root/src/base/config.c" "$root/src/base/config_text.c" "$root/src/base/fileio.c" "$root/src/base/log.c" \
	-lconfig -lsystemd

clang $flags -o "$out/fuzz_procfs" "$root/fuzz/fuzz_procfs.c" \
	"$root/src/sys/procfs.c" "$root/src/sys/vmas.c" "$root/src/sources/damon/damon_regions.c" \
	"$root/src/base/fileio.c"
clang $flags -o "$out/fuzz_damon_event" "$root/fuzz/fuzz_damon_event.c" \
	"$root/src/sources/damon/damon_event.c" "$root/src/base/fileio.c"
clang $flags -o "$out/fuzz_status" "$root/fuzz/fuzz_status.c" \
	"$root/src/daemon/status.c" "$root/src/base/prom_text.c" "$root/src/base/stats.c" \
	"$root/src/base/fileio.c" "$root/src/sys/topology.c" "$root/src/sys/zoneinfo.c" \
	"$root/src/base/log.c" "$root/src/base/config.c" "$root/src/base/config_text.c" -lconfig -lsystemd -lm
targets="fuzz_perf_record fuzz_perf_data fuzz_config fuzz_procfs fuzz_damon_event fuzz_status"
for t in $targets; do
	mkdir -p "$out/corpus_$t" "$root/fuzz/seeds/$t"
done
real=$root/tests/data/pebs-skx-loadlat-weight-struct.data
if [ -r "$real" ] && [ ! -e "$out/corpus_fuzz_perf_data/real-head" ]; then
	head -c 65536 "$real" >"$out/corpus_fuzz_perf_data/real-head"
fi
if command -v perf >/dev/null 2>&1 && [ ! -e "$out/corpus_fuzz_perf_data/page-faults" ]; then
	perf record -q -e page-faults -c 1 -d -o "$out/corpus_fuzz_perf_data/page-faults" -- true \
		>/dev/null 2>&1 || rm -f "$out/corpus_fuzz_perf_data/page-faults"
fi

# libconfig 1.5's own leak on some syntax errors is suppressed by its allocation site
# (fuzz/lsan.supp says why); any other leak fails the run.
export LSAN_OPTIONS="suppressions=$root/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

# An empty working directory: fuzz_config's inputs may @include relative paths.
cwd=$(mktemp -d "${TMPDIR:-/tmp}/pghotd-fuzz.XXXXXX")
trap 'rm -rf "$cwd"' EXIT
for t in $targets; do
	if [ $ci = 1 ]; then
		rm -rf "${out:?}/corpus_$t"
		mkdir -p "$out/corpus_$t"
	fi
	echo "fuzz: $t for $([ $ci = 1 ] && echo "a fixed run" || echo "${secs}s") from $(ls "$root/fuzz/seeds/$t" | wc -l) seeds and" \
		"$(ls "$out/corpus_$t" | wc -l) learned inputs"
	if [ $ci = 1 ]; then
		# Inputs per target: about 20 s each on a busy 2-core host (fuzz_config runs ~500
		# inputs/s there, the perf parsers 30,000-80,000). The working corpus starts empty,
		# so the run depends only on the committed seeds.
		case $t in
		fuzz_perf_record) budget=(-runs=600000) ;;
		fuzz_perf_data) budget=(-runs=300000) ;;
		fuzz_procfs) budget=(-runs=80000) ;; # 4,000-6,000 inputs/s on an idle one
		fuzz_damon_event) budget=(-runs=200000) ;; # about 22,000 inputs/s on an idle one
		fuzz_status) budget=(-runs=50000) ;; # about 2,500 inputs/s on a busy one
		*) budget=(-runs=8000) ;;
		esac
		budget+=(-seed=1)
	else
		budget=(-max_total_time="$secs")
	fi
	(cd "$cwd" && "$out/$t" "${budget[@]}" -max_len=65536 -print_final_stats=1 \
		-timeout=10 -artifact_prefix="$out/" "$out/corpus_$t" "$root/fuzz/seeds/$t") \
		2>"$out/$t.log" ||
		{ tail -40 "$out/$t.log"; exit 1; }
	grep -E "stat::number_of_executed_units|Done" "$out/$t.log" | tail -1
	if [ $update = 1 ]; then
		# Seeds stay small (a few hundred KiB per target): the merge keeps the inputs that
		# add coverage, read up to 6 KiB each.
		(cd "$cwd" && "$out/$t" -merge=1 -max_len=6144 "$root/fuzz/seeds/$t" \
			"$out/corpus_$t") >>"$out/$t.log" 2>&1 || { tail -20 "$out/$t.log"; exit 1; }
		echo "fuzz: $t seeds now $(ls "$root/fuzz/seeds/$t" | wc -l) files," \
			"$(du -sk --apparent-size "$root/fuzz/seeds/$t" | cut -f1) KiB"
	fi
done
