#!/bin/bash
# pghotd --status against the real daemon and its real stats file: the view while it runs
# (as an unprivileged user too, when run as root), --watch until SIGINT, and the one-line
# errors when the daemon stopped, the file is missing, stale, or not a regular file.
# Usage: check_status.sh BINARY   (the integration suite; prints each failure, exits 1 on any)
set -u
bin=${1:-${PGHOTD_BINARY:-build/pghotd}}
dir=$(mktemp -d /tmp/pghotd-status.XXXXXX)
chmod 755 "$dir"
# shellcheck source=tests/daemon_lib.sh
. "$(dirname "$0")/daemon_lib.sh"
# shellcheck disable=SC2317 # the EXIT trap
cleanup() {
	[ -z "$daemon" ] || kill "$daemon" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
fails=0
fail() {
	echo "check_status: FAIL: $*"
	fails=$((fails + 1))
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }
status() { "$bin" --status --config "$dir/pghotd.conf"; }

daemon_start "$bin" "$dir" || fail "pghotd wrote no stats file: $(tail -3 "$dir/daemon.log")"

# The view while the daemon runs, with its time (a bound far above the 4 ms measured:
# this gates hangs and pathologies, not speed).
t0=$(now_ms)
status >"$dir/out" 2>"$dir/err"
rc=$? ms=$(($(now_ms) - t0))
[ $rc = 0 ] || fail "--status exited $rc while pghotd runs: $(cat "$dir/err")"
for want in '^pghotd up ' '^rates: averages since the start' '^NODE ' '^MOVES ' '^SOURCE ' \
	'^abit +off' '^cgroups: |^CGROUPS: '; do
	grep -Eq "$want" "$dir/out" || fail "the view has no line matching '$want'"
done
[ $ms -lt 1000 ] || fail "--status took $ms ms"
echo "check_status: --status answered in $ms ms"

# No privilege but reading the file: as nobody, when this runs as root.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$bin" --status --config "$dir/pghotd.conf" >"$dir/out-nobody" 2>&1 ||
		fail "--status as nobody exited $?: $(head -3 "$dir/out-nobody")"
fi

# --watch: frames until SIGINT, then exit 0; from the second write on, rates per interval.
"$bin" --status --config "$dir/pghotd.conf" --watch 0.2 >"$dir/watch" 2>&1 &
w=$!
sleep 1.2
kill -INT $w
wait $w
rc=$?
[ $rc = 0 ] || fail "--status --watch exited $rc on SIGINT"
frames=$(grep -c '^pghotd --status, every 0.2 s' "$dir/watch")
[ "$frames" -ge 3 ] || fail "--watch 0.2 showed $frames frames in 1.2 s"
grep -q "^rates: over the last .*, between two writes of the daemon" "$dir/watch" ||
	fail "--watch never showed the rates over an interval"

# Stopped: the file stays with pghotd_up 0.
daemon_stop
status >"$dir/out" 2>"$dir/err"
rc=$?
[ $rc = 1 ] || fail "--status exited $rc after pghotd stopped, not 1"
grep -q '^pghotd: pghotd is not running: it stopped .* ago' "$dir/err" ||
	fail "after the stop: $(cat "$dir/err")"

# Stale: the file left by a daemon that went away without a word.
sed 's/^pghotd_up 0/pghotd_up 1/' "$dir/stats.prom" >"$dir/stale" && mv "$dir/stale" "$dir/stats.prom"
touch -d '-1 hour' "$dir/stats.prom"
status >"$dir/out" 2>"$dir/err"
rc=$?
[ $rc = 1 ] || fail "--status exited $rc on a stale file, not 1"
grep -q 'stats.prom was last written 1 h 0 min ago, more than 3 x stats.interval_ms' "$dir/err" ||
	fail "on a stale file: $(cat "$dir/err")"

# Missing, and a FIFO in its place (refused at once, never blocks).
rm "$dir/stats.prom"
status >"$dir/out" 2>"$dir/err"
rc=$?
{ [ $rc = 1 ] && grep -q "^pghotd: no stats file at $dir/stats.prom: pghotd is not running.*systemctl status pghotd" "$dir/err"; } ||
	fail "without the file: exit $rc, $(cat "$dir/err")"
mkfifo "$dir/stats.prom"
timeout 5 "$bin" --status --config "$dir/pghotd.conf" >"$dir/out" 2>"$dir/err"
rc=$?
{ [ $rc = 1 ] && grep -q 'not a regular file' "$dir/err"; } || fail "with a FIFO: exit $rc, $(cat "$dir/err")"

[ $fails = 0 ] && echo "check_status: pass"
exit $((fails > 0))
