# shellcheck shell=bash
# lib.sh: helpers for scenario scripts (source it: . "$(dirname "$0")/lib.sh").
# A scenario is: build a guest command, tests/vm/run it, check the results with these.

# shellcheck disable=SC2034 # for the scripts that source this file
vm_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# vm_fail MSG: prints "<scenario>: FAIL: MSG" and exits 1.
vm_fail() { echo "$(basename "$0"): FAIL: $*" >&2; exit 1; }

# vm_summary DIR KEY: a value of the workload's summary line in DIR/workload.out.
vm_summary() {
	grep '^workload: pages=' "$1/workload.out" 2>/dev/null | tail -1 |
		sed -n "s/.* $2=\([^ ]*\).*/\1/p"
}

# vm_stat DIR FAMILY: pghotd's counter FAMILY summed over labels, from DIR/pghotd.stats.prom.
vm_stat() {
	awk -v fam="$2" '/^#/ { next } { n = $1; sub(/\{.*/, "", n); if (n == fam) s += $NF }
		END { printf "%.15g\n", s }' "$1/pghotd.stats.prom"
}

# vm_vmstat_delta DIR KEY: /proc/vmstat KEY after the command minus before it.
vm_vmstat_delta() {
	awk -v k="$2" '$1 == k { v[FILENAME] = $2 } END { print v[ARGV[2]] - v[ARGV[1]] }' \
		"$1/vmstat.before" "$1/vmstat.after"
}

# vm_ge A B, vm_le A B: numeric comparisons of decimals (awk), for checks like
# vm_ge "$(vm_summary "$out" hot_fast_fraction)" 0.95 || vm_fail ...
vm_ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }'; }
vm_le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 <= b + 0) }'; }
