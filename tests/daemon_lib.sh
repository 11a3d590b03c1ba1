# shellcheck shell=bash
# daemon_lib.sh: sourced by the integration scripts that need the real daemon writing its
# stats file. daemon_start BINARY DIR starts it in the foreground of a background job with
# every source off and stats.file DIR/stats.prom written every 100 ms (DIR/pghotd.conf, mode
# 0644; the daemon's stderr in DIR/daemon.log), sets $daemon to its pid and returns once
# the file has been written a few times (1 when it never appears within 5 s);
# daemon_stop stops it with SIGTERM and waits (the file then says pghotd_up 0).
daemon=
daemon_start() {
	local bin=$1 dir=$2
	cat >"$dir/pghotd.conf" <<CONF
sources = { ibs = { enabled = "off"; }; pebs = { enabled = "off"; };
	abit = { enabled = "off"; }; damon = { enabled = "off"; }; };
stats = { file = "$dir/stats.prom"; interval_ms = 100; };
CONF
	chmod 644 "$dir/pghotd.conf"
	"$bin" --config "$dir/pghotd.conf" --log=stderr 2>"$dir/daemon.log" &
	daemon=$!
	for _ in $(seq 50); do [ -s "$dir/stats.prom" ] && break; sleep 0.1; done
	[ -s "$dir/stats.prom" ] || return 1
	sleep 0.3 # a few writes: the file is fresh and the first interval behind it
}
daemon_stop() {
	[ -n "$daemon" ] || return 0
	kill -TERM "$daemon"
	wait "$daemon"
	daemon=
}
