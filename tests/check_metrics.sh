#!/bin/bash
# The real daemon's stats file through Prometheus's own checker: `promtool check metrics`
# (Debian's prometheus package, in the Makefile's DEB_PACKAGES) must accept it without a
# word, lint included (counter names, units, HELP). A missing promtool fails: this is the
# gate that the file is what Prometheus and node_exporter read.
# Usage: check_metrics.sh BINARY
set -u
bin=${1:-${PGHOTD_BINARY:-build/pghotd}}
command -v promtool >/dev/null ||
	{ echo "check_metrics: FAIL: promtool missing: apt-get install prometheus (make deps does)"; exit 1; }
dir=$(mktemp -d /tmp/pghotd-metrics.XXXXXX)
# shellcheck source=tests/daemon_lib.sh
. "$(dirname "$0")/daemon_lib.sh"
trap '[ -z "$daemon" ] || kill "$daemon" 2>/dev/null; rm -rf "$dir"' EXIT
daemon_start "$bin" "$dir" ||
	{ echo "check_metrics: FAIL: pghotd wrote no stats file: $(tail -3 "$dir/daemon.log")"; exit 1; }
fails=0
check() { # WHAT: the stats file as it is now, through promtool
	cp "$dir/stats.prom" "$dir/checked.prom"
	out=$(promtool check metrics <"$dir/checked.prom" 2>&1)
	rc=$?
	if [ $rc != 0 ] || [ -n "$out" ]; then
		echo "check_metrics: FAIL: promtool check metrics on the stats file $1 exited $rc:"
		echo "$out" | head -20 | sed 's/^/  /'
		fails=$((fails + 1))
	fi
}
check "of the running daemon"
daemon_stop
check "written at the stop"
families=$(grep -c '^# TYPE ' "$dir/checked.prom")
[ $fails = 0 ] && echo "check_metrics: pass: $families families, $(grep -vc '^#' "$dir/checked.prom") samples, $(promtool --version 2>&1 | head -1)"
exit $((fails > 0))
