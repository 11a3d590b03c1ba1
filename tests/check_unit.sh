#!/bin/bash
# check_unit.sh UNIT SYSCALLS SRC_DIR: the built pghotd.service against systemd's own rules.
#  1. systemd-analyze verify prints nothing (it exits 0 even on "Unknown key"), with ExecStart=
#     pointing at $PGHOTD_BINARY since the unit's path is not installed at build time.
#  2. The unit's effective filter allows exactly the calls in SYSCALLS and systemd's @default
#     (which systemd adds to every allow list), no other; the SystemCallFilter=
#     lines in order (the first decides allow or deny list; under an allow list a ~ line
#     removes, under a deny list a plain line removes), groups expanded by
#     `systemd-analyze syscall-filter`, less the sets ProtectClock= (@clock),
#     ProtectKernelModules= (@module), ProtectKernelLogs= (syslog), ProtectHostname=
#     (sethostname, setdomainname) and PrivateDevices= (@raw-io) deny.
#  3. Every raw syscall(SYS_x) in SRC_DIR and the call behind every wrapper below is in SYSCALLS.
#  4. The check can fail: the unit with a ~@resources @debug line (the filter of an old unit)
#     must lose move_pages, sched_setaffinity and perf_event_open, and the filter of the unit
#     before the explicit list (@system-service and ~ lines) must show calls beyond the list:
#     process_vm_readv, process_vm_writev, io_uring_setup, userfaultfd, kcmp.
set -euo pipefail
unit=$1 list=$2 src=$3
fail=0
bad() { echo "FAIL: $*"; fail=1; }
command -v systemd-analyze >/dev/null || { echo "SKIP: systemd-analyze missing (apt-get install systemd)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 1. verify
sed "s|^ExecStart=[^ ]*/pghotd |ExecStart=${PGHOTD_BINARY:-/bin/true} |; s|^ExecReload=[^ ]*/pghotd |ExecReload=${PGHOTD_BINARY:-/bin/true} |" \
	"$unit" >"$tmp/pghotd.service"
out=$(systemd-analyze verify --man=no "$tmp/pghotd.service" 2>&1) || bad "systemd-analyze verify exited non-zero"
[ -z "$out" ] || bad "systemd-analyze verify is not clean:"$'\n'"$out"

# 2. the effective filter
systemd-analyze syscall-filter >"$tmp/sets" 2>/dev/null
known=$(awk '/^@known/ { k = 1; next } /^@/ { k = 0 } k && $1 !~ /^#/ { print $1 }' "$tmp/sets" | sort -u)
# allowed UNIT: the calls the unit's filters let through, one a line.
allowed() {
	awk -v known="$(echo $known)" '
	FNR == NR {
		if ($0 ~ /^@/) { g = $1; next }
		if ($1 ~ /^#/ || $1 == "") next
		member[g] = member[g] " " $1
		next
	}
	function expand(item, out,   n, parts, i) {
		if (item !~ /^@/) { out[item] = 1; return }
		n = split(member[item], parts, " ")
		for (i = 1; i <= n; i++) expand(parts[i], out)
	}
	function apply(items, add,   n, parts, i, set, s) {
		n = split(items, parts, " ")
		for (i = 1; i <= n; i++) {
			delete set
			expand(parts[i], set)
			for (s in set) { if (add) filt[s] = 1; else delete filt[s] }
		}
	}
	/^SystemCallFilter=/ {
		v = substr($0, length("SystemCallFilter=") + 1)
		if (v == "") { delete filt; mode = ""; next }
		neg = (v ~ /^~/); sub(/^~/, "", v)
		if (mode == "") {
			mode = neg ? "deny" : "allow"
			if (mode == "allow") apply("@default", 1) # systemd adds it to an allow list
		}
		# allow list: plain adds, ~ removes; deny list: ~ adds to the denied, plain removes
		apply(v, mode == "allow" ? !neg : neg)
	}
	/^ProtectClock=yes/ { implied = implied " @clock" }
	/^ProtectKernelModules=yes/ { implied = implied " @module" }
	/^ProtectKernelLogs=yes/ { implied = implied " syslog" }
	/^ProtectHostname=yes/ { implied = implied " sethostname setdomainname" }
	/^PrivateDevices=yes/ { implied = implied " @raw-io" }
	END {
		n = split(known, all, " ")
		if (mode == "deny") { for (s in filt) denied[s] = 1; delete filt; for (i = 1; i <= n; i++) if (!(all[i] in denied)) filt[all[i]] = 1 }
		if (mode == "") for (i = 1; i <= n; i++) filt[all[i]] = 1
		m = split(implied, parts, " ")
		for (i = 1; i <= m; i++) { delete set; expand(parts[i], set); for (s in set) delete filt[s] }
		for (s in filt) print s
	}' "$tmp/sets" "$1" | sort -u
}
needed=$(sed 's/#.*//' "$list" | tr -s ' \t' '\n\n' | sed '/^$/d' | sort -u)
for s in $needed; do
	grep -qxF "$s" <<<"$known" || bad "$list names $s, which systemd does not know as a system call"
done
allowed "$unit" >"$tmp/allowed"
missing=$(comm -23 <(echo "$needed") "$tmp/allowed" | tr '\n' ' ')
[ -z "$missing" ] || bad "the unit's filter refuses calls pghotd makes: $missing"
default=$(awk '/^@default/ { k = 1; next } /^@/ { k = 0 } k && $1 !~ /^#/ && $1 != "" { print $1 }' "$tmp/sets" | sort -u)
# beyond UNIT: the calls UNIT's filter allows that pghotd does not make, beyond @default.
beyond() { allowed "$1" | comm -23 - <(printf '%s\n' $needed $default | sort -u) | tr '\n' ' '; }
extra=$(beyond "$unit")
[ -z "$extra" ] || bad "the unit's filter allows calls pghotd does not make: $extra"

# 3. the list covers the source: raw syscalls and the wrappers' calls
raw=$(grep -rohE --include='*.c' 'syscall\(SYS_[a-z0-9_]+' "$src" | sed 's/.*SYS_//' | sort -u)
wrappers="move_pages:move_pages sched_setaffinity:sched_setaffinity sched_getaffinity:sched_getaffinity
setrlimit:prlimit64 getrlimit:prlimit64 ioctl:ioctl mmap:mmap munmap:munmap madvise:madvise
pread:pread64 pwrite:pwrite64 eventfd:eventfd2 epoll_create1:epoll_create1 epoll_ctl:epoll_ctl
epoll_wait:epoll_wait uname:uname kill:kill nanosleep:clock_nanosleep rename:rename mkdir:mkdir
unlink:unlink opendir:openat readdir:getdents64 pthread_create:clone mbind:mbind
set_mempolicy:set_mempolicy migrate_pages:migrate_pages process_madvise:process_madvise
pidfd_open:pidfd_open process_vm_readv:process_vm_readv qsort:sysinfo mkostemp:getrandom"
for w in $wrappers; do
	grep -rqE --include='*.c' "(^|[^a-z_>.])${w%%:*}\(" "$src" && raw+=$'\n'"${w#*:}"
done
for s in $(echo "$raw" | sort -u); do
	grep -qxF "$s" <<<"$needed" || bad "src/ calls $s, which $list does not list"
done

# 4. the check sees the old defect
{ cat "$unit"; echo "SystemCallFilter=~@privileged @resources @debug"; } >"$tmp/old.service"
lost=$(comm -23 <(echo "$needed") <(allowed "$tmp/old.service") | tr '\n' ' ')
for s in move_pages sched_setaffinity perf_event_open; do
	[[ " $lost " == *" $s "* ]] || bad "self-check: a ~@resources @debug line should refuse $s (refused: $lost)"
done

# The filter before the explicit list, as it stood: what it let through beyond the list.
{
	grep -v '^SystemCallFilter=' "$unit"
	echo "SystemCallFilter=@system-service perf_event_open"
	echo "SystemCallFilter=~@privileged @obsolete @mount @swap @reboot @module @raw-io @clock @cpu-emulation"
	echo "SystemCallFilter=~ioprio_set mbind migrate_pages nice sched_setattr sched_setparam sched_setscheduler set_mempolicy_home_node setpriority setrlimit"
} >"$tmp/wide.service"
wide=$(beyond "$tmp/wide.service")
for s in process_vm_readv process_vm_writev io_uring_setup userfaultfd kcmp; do
	[[ " $wide " == *" $s "* ]] || bad "self-check: the @system-service filter should show $s beyond the list"
done

if [ $fail = 0 ]; then
	echo "unit: verify clean; filter allows the $(echo "$needed" | wc -l) calls of $list and" \
		"@default, nothing else ($(wc -l <"$tmp/allowed") allowed in all); the old" \
		"~@resources @debug line would refuse: $lost; the @system-service filter allowed" \
		"$(wc -w <<<"$wide") more"
fi
exit $fail
