#!/bin/sh
# Documentation and service-file checks: man pages render without warnings, every config
# key the daemon knows is documented, and the unit's exposure stays at 3.0 or lower.
set -u
root=$1
bin=${PGHOTD_BINARY:-$root/build/pghotd}
fail=0

for page in "$root/man/pghotd.8" "$root/man/pghotd.conf.5"; do
	out=$(groff -man -ww -z "$page" 2>&1)
	if [ -n "$out" ]; then
		echo "FAIL: groff warnings in $page:"; echo "$out"; fail=1
	fi
done

# Every key in the effective config (--check-config prints them all) appears in the man page.
keys=$("$bin" --check-config --config "$root/conf/pghotd.conf" | sed -n 's/^[[:space:]]*\([a-z_0-9]*\)[[:space:]]*=.*/\1/p' | sort -u)
[ -n "$keys" ] || { echo "FAIL: --check-config printed no keys"; fail=1; }
for k in $keys; do
	grep -q "$k" "$root/man/pghotd.conf.5" || { echo "FAIL: key $k missing from pghotd.conf(5)"; fail=1; }
	grep -q "$k" "$root/conf/pghotd.conf" || { echo "FAIL: key $k missing from conf/pghotd.conf"; fail=1; }
done

if command -v systemd-analyze >/dev/null; then
	level=$(systemd-analyze security --offline=true "${PGHOTD_UNIT:-$root/build/pghotd.service}" 2>/dev/null |
		sed -n 's/.*Overall exposure level for pghotd.service: \([0-9.]*\).*/\1/p')
	if [ -z "$level" ]; then
		echo "FAIL: systemd-analyze printed no exposure level"; fail=1
	elif ! awk -v l="$level" 'BEGIN { exit !(l <= 3.0) }'; then
		echo "FAIL: service exposure $level > 3.0"; fail=1
	else
		echo "service exposure: $level"
	fi
else
	echo "systemd-analyze missing: exposure not checked"
fi
exit $fail
