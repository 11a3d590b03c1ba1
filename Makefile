# pghotd: the two commands a new user runs are `make demo` and `make test`; `make run` runs the
# daemon on this machine in the foreground.
SHELL := /bin/bash
BUILD ?= build
MESON_OPTS ?= -Dwerror_ci=true

DEB_PACKAGES := meson ninja-build pkg-config gcc clang libnuma-dev libpfm4-dev libconfig-dev \
	libsystemd-dev libzstd-dev libcmocka-dev liburcu-dev groff-base systemd util-linux numactl linux-perf \
	linux-source-6.12 qemu-system-x86 busybox-static gnuplot-nox bc bison flex libelf-dev libssl-dev cpio xz-utils \
	mmdebstrap e2fsprogs debhelper build-essential lintian prometheus

.PHONY: all deps build deb test test-unit test-asan test-tsan test-fuzz test-vm soak bench bench-vm run demo clean

all: build

deps:
	@missing=$$(for p in $(DEB_PACKAGES); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "deps: installing" $$missing; \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing >/tmp/pghotd-deps.log 2>&1 \
		|| { $$SUDO apt-get update -q >/dev/null 2>&1 && \
		     $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing >/tmp/pghotd-deps.log 2>&1; } \
		|| { tail -20 /tmp/pghotd-deps.log; exit 1; }; \
	fi

# The Debian package: $(BUILD)/deb/pghotd_<version>_<arch>.deb, built by dpkg-buildpackage -b from
# a copy of the tree (tools/build-deb; the tree stays clean), its unit suite run in the build
# (DEB_BUILD_OPTIONS=nocheck skips it), lintian-clean. Install it with
# apt-get install ./$(BUILD)/deb/pghotd_<version>_<arch>.deb.
deb: deps
	DEB_BUILD_OPTIONS="$${DEB_BUILD_OPTIONS-}" tools/build-deb --lint --out $(BUILD)/deb

$(BUILD)/build.ninja:
	meson setup $(BUILD) $(MESON_OPTS)

build: $(BUILD)/build.ninja
	ninja -C $(BUILD)

build-asan/build.ninja:
	meson setup build-asan $(MESON_OPTS) -Db_sanitize=address,undefined -Db_lundef=false -Dsanitizer_suites=unit -Dbenchmarks=false

build-tsan/build.ninja:
	CC=clang meson setup build-tsan $(MESON_OPTS) -Db_sanitize=thread -Db_lundef=false -Dsanitizer_suites=concurrent -Dbenchmarks=false

test: deps build
	meson test -C $(BUILD) --print-errorlogs
	$(MAKE) --no-print-directory test-asan test-tsan test-fuzz test-vm

test-asan: build-asan/build.ninja
	ninja -C build-asan
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 meson test -C build-asan --suite unit --print-errorlogs

test-tsan: build-tsan/build.ninja
	ninja -C build-tsan
	TSAN_OPTIONS=halt_on_error=1 meson test -C build-tsan --suite concurrent --print-errorlogs

# libFuzzer on the perf record parser, the perf.data reader and the configuration parser,
# from the seeds committed under fuzz/seeds/: a fixed number of inputs from a fixed seed, so
# the gate is the same run every time (fuzz/run.sh SECONDS explores; --update-seeds keeps
# what it learned).
test-fuzz:
	FUZZ_OUT=$(CURDIR)/build-fuzz fuzz/run.sh --ci

# The VM scenarios (tests/vm/test-all): a two-node guest kernel, built once and cached, runs
# pghotd and the kernel's NUMA balancing on real page placement. Results under build dir.
test-vm: deps build
	BUILD=$(BUILD) tests/vm/test-all $(BUILD)/test-vm

# pghotd for SOAK_MINUTES (30) in the guest under churn: workloads that start and exit, a
# reload every 10 s (good and bad files), a full-DRAM phase; RSS, open files, page contents
# and counters checked at the end (tests/vm/benches/soak). Not part of make test.
soak: deps build
	BUILD=$(BUILD) tests/vm/benches/soak $(BUILD)/soak

# pghotd next to NUMA balancing in the guest: live progress, a table, a plot (tests/vm/benches/demo).
# KERNEL=debian boots Debian's own 6.12 kernel, with DAMON-based tiering as a fourth run.
demo: deps build
	BUILD=$(BUILD) PGHOTD_VM_KERNEL=$(or $(KERNEL),built) tests/vm/benches/demo $(BUILD)/demo$(if $(filter debian,$(KERNEL)),-debian)

bench: deps build
	@for b in $(BUILD)/bench/bench_*; do [ -f "$$b" ] && [ -x "$$b" ] && { echo "== $$b"; "$$b"; }; done

# The guest's benchmarks (tests/vm/benches/bench-vm): the promoter against plain move_pages(2) with
# real moves from node 1 to node 0, the Accessed-bit scan round against its bare syscalls,
# the cost of each page_idle call, and scenario 7's race against NUMA balancing, medians of
# five alternating runs a side. Not part of make test: races and speed are measured, not gated.
# KERNEL=debian runs the race on Debian's own 6.12 kernel, with DAMON-based tiering as a side.
bench-vm: deps build
	BUILD=$(BUILD) PGHOTD_VM_KERNEL=$(or $(KERNEL),built) tests/vm/benches/bench-vm $(BUILD)/bench-vm$(if $(filter debian,$(KERNEL)),-debian)

run: deps build
	@mkdir -p $(BUILD)/run
	sed 's|^\(\s*file\s*=\s*\).*|\1"$(CURDIR)/$(BUILD)/run/stats.prom";|' conf/pghotd.conf > $(BUILD)/run/pghotd.conf
	$(BUILD)/pghotd --probe --config $(BUILD)/run/pghotd.conf
	@echo "run: starting pghotd in the foreground (Ctrl-C stops it); stats in $(BUILD)/run/stats.prom"
	$(BUILD)/pghotd --config $(BUILD)/run/pghotd.conf

clean:
	rm -rf $(BUILD) build-asan build-tsan build-fuzz
