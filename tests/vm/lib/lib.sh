# shellcheck shell=bash
# lib.sh: helpers for the testbed's scripts (a scenario or bench sources it:
# . "$(dirname "$0")/../lib/lib.sh"). A scenario is: build a guest command, tests/vm/lib/run
# it, check the results with these.

# vm_dir: tests/vm, the testbed's root: lib/ (the guest and these helpers), scenarios/ (the
# gates, listed in gates), benches/ (measured, not gated).
# shellcheck disable=SC2034 # for the scripts that source this file
vm_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# vm_cache: where the testbed keeps what it makes once and reuses (the built kernel, Debian's
# kernel, the systemd guest's root images, private apt lists), each entry named by a key of
# what it was made from. PGHOTD_KERNEL_CACHE moves it.
vm_cache=${PGHOTD_KERNEL_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/pghotd}

# vm_lock FILE MESSAGE: an exclusive flock(1) on FILE, held until the script exits (the open
# descriptor is inherited, so a build running in the background holds it too). When another
# process holds it, prints MESSAGE on stderr and waits for it.
vm_lock() {
	local fd
	exec {fd}>"$1"
	flock -n "$fd" && return 0
	echo "$2" >&2
	flock "$fd"
}

# vm_cache_find NAME WHO FOUND...: the cache's look-up before making entry NAME. Runs FOUND...
# (a command that prints the usable entry, and fails when there is none or it must be made
# again); returns 0 when it succeeds. Otherwise takes $vm_cache/NAME.lock (WHO, the caller's
# name, says when it waits for another run making the same entry), asks FOUND again, since
# that run may have made it, and returns 1 with the lock held: the caller makes the entry.
vm_cache_find() {
	local name=$1 who=$2
	shift 2
	"$@" && return 0
	mkdir -p "$vm_cache"
	vm_lock "$vm_cache/$name.lock" "$who: another run is making $name; waiting for it"
	"$@" && return 0
	return 1
}

# vm_gates: the gates of make test-vm, one name a line, from tests/vm/gates (comments and
# blank lines dropped); each names a script in tests/vm/scenarios/.
vm_gates() { sed 's/#.*//' "$vm_dir/gates" | awk 'NF { print $1 }'; }

# vm_fail MSG: prints "<scenario>: FAIL: MSG" and exits 1.
vm_fail() { echo "$(basename "$0"): FAIL: $*" >&2; exit 1; }

# vm_summary DIR KEY [FILE]: a value of the workload's summary line in DIR/FILE
# (workload.out).
vm_summary() {
	grep '^workload: pages=' "$1/${3:-workload.out}" 2>/dev/null | tail -1 |
		sed -n "s/.* $2=\([^ ]*\).*/\1/p"
}

# vm_stat DIR FAMILY: pghotd's counter FAMILY summed over labels, from DIR/pghotd.stats.prom.
vm_stat() {
	awk -v fam="$2" '/^#/ { next } { n = $1; sub(/\{.*/, "", n); if (n == fam) s += $NF }
		END { printf "%.15g\n", s }' "$1/pghotd.stats.prom"
}

# vm_vmstat_end DIR: the /proc/vmstat that ends DIR's run: vmstat.stopped when the run's
# movers were stopped at the end of its measured window (movers-stop), else vmstat.after.
vm_vmstat_end() { if [ -r "$1/vmstat.stopped" ]; then echo "$1/vmstat.stopped"; else echo "$1/vmstat.after"; fi; }

# vm_vmstat_delta DIR KEY: /proc/vmstat KEY at the run's end (vm_vmstat_end) minus before it.
vm_vmstat_delta() {
	awk -v k="$2" '$1 == k { v[FILENAME] = $2 } END { print v[ARGV[2]] - v[ARGV[1]] }' \
		"$1/vmstat.before" "$(vm_vmstat_end "$1")"
}

# vm_window_workload ARGS OUT CODE: guest lines that run the workload with ARGS (its output to
# OUT, exit CODE when it fails) and end the measured window when its accesses end: movers-stop
# stops every mover before the workload reads its pages back (--check-after), so what each side
# moved is counted until it stopped, and the check's reads are nobody's use.
vm_window_workload() {
	# shellcheck disable=SC2016 # expands in the guest
	printf '%s\n' "rm -f /tmp/wl.done /tmp/wl.check" \
		"workload $1 --report-done /tmp/wl.done --check-after /tmp/wl.check >$2 &" \
		'wl=$!' \
		'while [ ! -s /tmp/wl.done ] && kill -0 $wl 2>/dev/null; do sleep 0.05; done' \
		'movers-stop' \
		'touch /tmp/wl.check' \
		"wait \$wl || exit $3"
}

# vm_ge A B, vm_le A B: numeric comparisons of decimals (awk), for checks like
# vm_ge "$(vm_summary "$out" hot_fast_fraction)" 0.95 || vm_fail ...
vm_ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }'; }
vm_le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 <= b + 0) }'; }

# vm_placed ON_SLOW PAGES: true when the workload's buffer started on the slow node, 99% of it
# at the workload's first look with pghotd running. Not all of it: x86 installs an anonymous
# page's PTE without the Accessed bit and the faulting store's retry sets it, so a page marked
# idle in between reads accessed at the next look, first evidence, promoted with DRAM free
# before that first look. A page is marked only on an LRU list, which a new page mostly is not
# (it waits in a per-CPU batch) except while move_pages runs (it disables those batches), as
# when two workloads place their buffers while pghotd promotes one of them. A failed
# placement, or first evidence misread from placement, moves far more than 1%.
vm_placed() { awk -v a="$1" -v n="$2" 'BEGIN { exit !(n > 0 && a + 0 >= int(n * 0.99)) }'; }

# The hot set workload of scenarios 1 and 7 and of the demo: 256 MiB placed on node 1, 10%
# hot (uniform), every cold page read once every 10 s, placement sampled every 0.25 s. The
# duration covers two cold sweeps and a scan round after the second; PGHOTD_VM_DURATION
# (read at each call, so a scenario can set it after sourcing this file) changes it.
vm_hotset_args() {
	echo "--size-mib 256 --hot-fraction 0.1 --cold-sweep 10 --duration ${PGHOTD_VM_DURATION:-22} --interval 0.25"
}

# vm_ballast_stop: guest lines that stop the ballast (the workload in $ballast) with pghotd
# held still (SIGSTOP, when $PGHOTD_PID is set): a ballast stopping reads every page back (the
# workload's nothing-lost check), and with node 0 free again once the hot workload exited,
# pghotd would take those reads for use and move ballast pages up and others down after the
# run a scenario counts (seen once on 363a8b8: 19,362 more promotions in 3 s).
vm_ballast_stop() {
	# shellcheck disable=SC2016
	printf '%s\n' '[ -z "${PGHOTD_PID:-}" ] || kill -STOP $PGHOTD_PID' 'kill -TERM $ballast' \
		'wait $ballast' '[ -z "${PGHOTD_PID:-}" ] || kill -CONT $PGHOTD_PID'
}

# vm_damos_end: guest lines for the end of a run under DAMON-based tiering (damos-tiering
# start, Debian's kernel) whose workload wrote its start's uptime to $RESULTS/workload.start:
# the kdamonds' counters and CPU (damos.txt) and their CPU seconds per second since the start
# (damos.cpu, damos_cpu=), up to the window's end when movers-stop kept both there.
vm_damos_end() {
	# shellcheck disable=SC2016
	printf '%s\n' '[ -s $RESULTS/damos.txt ] || damos-tiering stats >$RESULTS/damos.txt' \
		'[ -s $RESULTS/window.end ] || cut -d" " -f1 /proc/uptime >$RESULTS/window.end' \
		'sed -n "s/.* cpu_s=\([0-9.]*\) .*/\1/p" $RESULTS/damos.txt |' \
		'	awk -v t0=$(cat $RESULTS/workload.start) -v t1=$(cat $RESULTS/window.end) "{ s += \$1 } END { printf \"damos_cpu=%.4f\n\", s / (t1 - t0) }" >$RESULTS/damos.cpu'
}

# vm_damos_pages DIR ACTION: the pages a damos kdamond's scheme applied ACTION to (DIR/damos.txt).
vm_damos_pages() { awk -v a="$2" '$0 ~ "action=" a " " { for (i = 1; i <= NF; i++) if ($i ~ /^sz_applied=/) { sub(/.*=/, "", $i); print int($i / 4096) } }' "$1/damos.txt"; }

# vm_oom_kills DIR: the processes the guest's OOM killer took (DIR/dmesg.txt); fails when none.
vm_oom_kills() {
	local n
	n=$(grep -c 'Out of memory: Killed process' "$1/dmesg.txt" 2>/dev/null) || true
	echo "${n:-0}"
	[ "${n:-0}" -gt 0 ]
}

# vm_config FILE [LIBCONFIG]...: writes a pghotd configuration for the guest: info logging,
# stats every 200 ms (so pghotd-stat-log sees them change; PGHOTD_VM_STATS_MS, read at each
# call, changes it), then the given settings.
vm_config() {
	local f=$1
	shift
	{
		echo "log_level = \"${PGHOTD_VM_LOG_LEVEL:-info}\";"
		echo "stats = { file = \"/run/pghotd/stats.prom\"; interval_ms = ${PGHOTD_VM_STATS_MS:-200}; };"
		printf '%s\n' "$@"
	} >"$f"
}

# vm_run DIR ARGS...: tests/vm/lib/run --out DIR --timeout (PGHOTD_VM_TIMEOUT or 240) ARGS...;
# returns run's status (the guest command's, 124 timeout, 125 guest failure).
vm_run() {
	local out=$1 rc=0
	shift
	"$vm_dir/lib/run" --timeout "${PGHOTD_VM_TIMEOUT:-240}" --out "$out" "$@" || rc=$?
	return $rc
}

# The slow tier (tests/vm/lib/run --slow-tier, README "The slow tier"): where the plugin must
# charge, in the addresses QEMU's plugin API gives it.
#
# vm_pc_lowmem TOTAL_MB [MAX_BELOW_4G_MB]: the MiB of RAM QEMU's pc machine maps below 4 GiB
# (the rest goes from 4 GiB up): all of it when it is under max-ram-below-4g (3584 by default),
# else max-ram-below-4g, but no more than 3072 (the pc machine aligns the split to a GiB).
vm_pc_lowmem() {
	local total=$1 max=${2:-3584}
	if [ "$total" -lt "$max" ]; then echo "$total"
	elif [ "$max" -gt 3072 ]; then echo 3072
	else echo "$max"; fi
}

# vm_qemu_addr_mode VERSION: how QEMU VERSION's qemu_plugin_hwaddr_phys_addr reports RAM.
# Before 8.2 (Debian 12's 7.2): "ramblock", the RAM block's ram_addr offset plus the offset
# within it plus the block's address in its parent region; the NUMA nodes' memory backends are
# the first blocks, in node order, so a node whose memory starts OFF MiB into the RAM reads as
# 2 x OFF onwards. From 8.2 on: "physical", the guest-physical address.
vm_qemu_addr_mode() {
	local major minor
	IFS=. read -r major minor _ <<<"$1"
	if [ "${major:-0}" -lt 8 ] || { [ "$major" = 8 ] && [ "${minor:-0}" -lt 2 ]; }; then
		echo ramblock
	else
		echo physical
	fi
}

# vm_slow_ranges MODE OFF_MB SIZE_MB LOWMEM_MB: the plugin's slow=START-END arguments
# (comma-separated) for a node whose memory is SIZE_MB MiB starting OFF_MB MiB into the guest's
# RAM, in MODE's addresses (vm_qemu_addr_mode); LOWMEM_MB is vm_pc_lowmem's split (physical
# addresses past it start at 4 GiB, so a node across it is two ranges).
vm_slow_ranges() {
	local mode=$1 off=$2 size=$3 low=$4 args=() a b
	vm_slow_range_arg() { printf 'slow=0x%x-0x%x' $(($1 << 20)) $(($2 << 20)); }
	if [ "$mode" = ramblock ]; then
		args+=("$(vm_slow_range_arg $((2 * off)) $((2 * off + size)))")
	else
		if [ "$off" -lt "$low" ]; then
			b=$((off + size < low ? off + size : low))
			args+=("$(vm_slow_range_arg "$off" "$b")")
		fi
		if [ $((off + size)) -gt "$low" ]; then
			a=$((off > low ? off : low))
			args+=("$(vm_slow_range_arg $((a - low + 4096)) $((off + size - low + 4096)))")
		fi
	fi
	(IFS=,; echo "${args[*]}")
}

# vm_slow_tier DIR KEY [FILE]: a value of the slow tier's last line in DIR/FILE
# (slow-tier.txt: "slow_tier_ratio=R requested=Q fast_ns= slow_ns= extra_ns= ok=1|0"); nothing,
# and status 0, when there is none.
vm_slow_tier() {
	{ grep '^slow_tier_ratio=' "$1/${3:-slow-tier.txt}" 2>/dev/null || true; } | tail -1 |
		tr ' ' '\n' | sed -n "s/^$2=//p"
}

# vm_check RC DIR [CODES MESSAGE]...: a guest run's verdict: nothing for status 0, MESSAGE for a
# status among CODES ("10", or "12|13"), else "tests/vm/lib/run exited with RC (DIR/console.log)".
vm_check() {
	local rc=$1 dir=$2
	shift 2
	[ "$rc" = 0 ] && return 0
	while [ $# -ge 2 ]; do
		case "|$1|" in *"|$rc|"*) vm_fail "$2" ;; esac
		shift 2
	done
	vm_fail "tests/vm/lib/run exited with $rc ($dir/console.log)"
}

# vm_finish [FAILURE]...: the scenario's verdict: each FAILURE as a FAIL line on stderr and
# exit 1; nothing when there is none.
vm_finish() {
	[ $# = 0 ] && return 0
	local f
	for f in "$@"; do echo "$(basename "$0"): FAIL: $f" >&2; done
	exit 1
}

# vm_log_count DIR REGEX: lines of pghotd's log in DIR matching the extended REGEX.
vm_log_count() { grep -cE "$2" "$1/pghotd.log" 2>/dev/null || true; }

# vm_growth WARM_S LIMIT: the soak's leak check over "SECONDS PHASE VALUE" lines on stdin, one
# sample a line in time order (PHASE: a label that stays the same while a phase of the run
# lasts, such as DRAM free or full). A phase's first minutes touch memory nothing touched
# before (the full-DRAM phase's demotion: a step of 2.4 MiB at its start in a 30-minute soak),
# so no value is judged against one from before a phase first ran: each run of a phase is
# judged on its own, its last value against its value WARM_S seconds in (or half its length,
# when shorter), and the last run must be of a phase that ran before, so the end is judged
# after every phase has run once. A leak is growth within runs of a phase: more than LIMIT
# (0.1: 10%) in any of them fails. Prints "PHASE:BASE->LAST ..." a run; exits 1 when one grew
# more, 2 when the last run's phase had not run before (or there were no samples).
vm_growth() {
	awk -v warm="$1" -v limit="$2" '
	NF >= 3 { n++; t[n] = $1; p[n] = $2; v[n] = $3 }
	END {
		bad = 0
		for (i = 1; i <= n; i = j) {
			for (j = i; j <= n && p[j] == p[i]; j++);
			w = (t[j - 1] - t[i]) / 2 < warm ? (t[j - 1] - t[i]) / 2 : warm
			for (k = i; t[k] - t[i] < w; k++);
			again = p[i] in seen
			seen[p[i]] = 1
			printf "%s%s:%s->%s", (i > 1 ? " " : ""), p[i], v[k], v[j - 1]
			if (v[j - 1] + 0 > (1 + limit) * v[k]) bad = 1
		}
		printf "\n"
		exit (n == 0 || !again) ? 2 : bad
	}'
}

# vm_slow_tier_on: whether runs boot with the slow tier (PGHOTD_VM_SLOW_TIER set, not off or 0).
vm_slow_tier_on() { case ${PGHOTD_VM_SLOW_TIER:-} in "" | off | 0) return 1 ;; esac; }

# Throughput (tests/vm/README.md, "Throughput"): from a run's workload.tsv, whose rows are
# "seconds hot cold accesses phase" with accesses counted from the start of the access loop.
# vm_tput DIR: accesses per second over the whole run (the last row's accesses / seconds).
vm_tput() {
	awk '/^#/ { next } NF >= 4 { t = $1; a = $4 } END { if (t > 0) printf "%.0f\n", a / t; else print "none" }' \
		"$1/workload.tsv" 2>/dev/null || echo none
}
# vm_tput_steady DIR: accesses per second over the run's second half (a reference side's
# level: the ceiling's or the floor's, whose placement does not change).
vm_tput_steady() {
	awk '/^#/ { next } NF >= 4 { n++; t[n] = $1; a[n] = $4 }
		END { if (n < 2) { print "none"; exit }
			for (i = 1; i < n && t[i] < t[n] / 2; i++);
			if (t[n] > t[i]) printf "%.0f\n", (a[n] - a[i]) / (t[n] - t[i]); else print "none" }' \
		"$1/workload.tsv" 2>/dev/null || echo none
}
# vm_rates DIR: "SECONDS ACCESSES_PER_SECOND" a row of DIR's workload.tsv, the rate over the
# second before that row (rows come every --interval; the first second has none).
vm_rates() {
	awk '/^#/ { next } NF >= 4 { n++; t[n] = $1; a[n] = $4; j = n
		while (j > 1 && t[n] - t[j] < 1) j--
		if (t[n] - t[j] >= 1) printf "%s %.0f\n", t[n], (a[n] - a[j]) / (t[n] - t[j]) }' \
		"$1/workload.tsv" 2>/dev/null
}
# vm_t90 DIR REF: the first time (seconds into the run) the accesses per second over the
# second before (vm_rates) reach 90% of REF (the ceiling's level); "none" when they never do,
# or REF is.
vm_t90() {
	[ "$2" != none ] || { echo none; return; }
	vm_rates "$1" | awk -v ref="$2" '$2 >= 0.9 * ref { printf "%.2f\n", $1; found = 1; exit }
		END { if (!found) print "none" }'
}
# vm_recovered SIDE FLOOR CEILING: (SIDE - FLOOR) / (CEILING - FLOOR), the share of what the
# slow tier took from the workload that a side won back; "none" when a figure is missing or
# the ceiling is not above the floor.
vm_recovered() {
	awk -v s="$1" -v f="$2" -v c="$3" 'BEGIN {
		if (s == "none" || f == "none" || c == "none" || c + 0 <= f + 0) print "none"
		else printf "%.3f\n", (s - f) / (c - f) }'
}

# vm_throughput_lines NAME DIRS SIDE...: a race's throughput, one line per side then the
# slow tier's ratio, from DIRS (the name of an associative array: side -> its runs' result
# directories, the reference sides ceiling and floor among them):
#   NAME-throughput: side=S tput=<median accesses/s> tput_spread=<min-max> recovered=<median>
#     recovered_spread=<min-max> t90_ceiling=<median s> t90_spread=<min-max>
# recovered (vm_recovered) is each run's whole-run throughput against the medians of the floor's
# and the ceiling's; t90_ceiling, the time the run's throughput reached 90% of the ceiling's
# steady level (vm_tput_steady, median over its runs). The ceiling and the floor get lines too.
vm_throughput_lines() {
	local name=$1 s d tp rec t9 ratios=()
	local -n runs_of=$2
	shift 2
	local ceil_l=() ceil_t=() floor_t=()
	for d in ${runs_of[ceiling]}; do ceil_l+=("$(vm_tput_steady "$d")") ceil_t+=("$(vm_tput "$d")"); done
	for d in ${runs_of[floor]}; do floor_t+=("$(vm_tput "$d")"); done
	local level ceil floor
	level=$(vm_median "${ceil_l[@]}") ceil=$(vm_median "${ceil_t[@]}") floor=$(vm_median "${floor_t[@]}")
	for s in "$@" ceiling floor; do
		tp=() rec=() t9=()
		for d in ${runs_of[$s]}; do
			tp+=("$(vm_tput "$d")")
			rec+=("$(vm_recovered "${tp[-1]}" "$floor" "$ceil")")
			t9+=("$(vm_t90 "$d" "$level")")
			ratios+=("$(vm_slow_tier "$d" slow_tier_ratio)")
		done
		echo "$name-throughput: side=$s tput=$(vm_median "${tp[@]}") tput_spread=$(vm_spread "${tp[@]}")" \
			"recovered=$(vm_median "${rec[@]}") recovered_spread=$(vm_spread "${rec[@]}")" \
			"t90_ceiling=$(vm_median "${t9[@]}") t90_spread=$(vm_spread "${t9[@]}")"
	done
	echo "$name-throughput: slow_tier_ratio=$(vm_median "${ratios[@]}") slow_tier_spread=$(vm_spread "${ratios[@]}") ceiling_level=$level"
}

# vm_median VALUE... and vm_spread VALUE...: the median and the min-max of the runs' figures
# ("none", a run that never got there, sorts last).
vm_median() { printf '%s\n' "$@" | sed 's/^none$/999/' | sort -n | awk '{ v[NR] = $1 } END { m = v[int((NR + 1) / 2)]; print (m == 999 ? "none" : m) }'; }
vm_spread() { printf '%s\n' "$@" | sed 's/^none$/999/' | sort -n | sed 's/^999$/none/' | sed -n '1p;$p' | paste -sd- | sed 's/^\([^-]*\)$/\1-\1/'; }

# vm_int A: A rounded to an integer (for shell arithmetic on awk's decimals).
vm_int() { awk -v a="$1" 'BEGIN { printf "%d\n", a + 0.5 }'; }
