/* Tests for the IBS source: RAW register decoding against values worked out from the AMD PPR
 * bit definitions (and the kernel's mapping to perf_mem_data_src), including erratum 1293;
 * the attr built from fixture sysfs trees (Zen 3 without l3missonly, Zen 4 with it, a 6.14+
 * kernel with swfilt); the period rules; kernel version parsing; sample conversion. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include <sys/eventfd.h>
#include <unistd.h>

#include "base/config.h"
#include "fake_perf.h"

#include <linux/perf_event.h>

#include "sources/pmu/ibs_decode.h"
#include "sys/kernel_release.h"
#include "sources/pmu/mem_src.h"
#include "sources/perf/perf_sample.h"
#include "sources/pmu/ibs_source.h"
#include "base/stats.h"

#define LVL(x)	  ((uint64_t)(x) << MEM_SRC_LVL_SHIFT)
#define LVLNUM(x) ((uint64_t)(x) << MEM_SRC_LVLNUM_SHIFT)
#define REMOTE	  (1ull << MEM_SRC_REMOTE_SHIFT)

static const struct ibs_cpu zen3_erratum = {.family = 0x19, .model = 0x01};
static const struct ibs_cpu zen3_fixed = {.family = 0x19, .model = 0x21};
static const struct ibs_cpu zen4 = {.family = 0x19, .model = 0x11};

static void fixture_root(const char *name, char *buf, size_t size)
{
	const char *dir = getenv("PGHOTD_FIXTURES");

	assert_non_null(dir);
	snprintf(buf, size, "%s/%s", dir, name);
}

static struct ibs_pmu read_pmu(const char *name)
{
	char root[PATH_MAX], reason[SAMPLER_REASON_MAX] = "";
	struct ibs_pmu p;

	fixture_root(name, root, sizeof(root));
	assert_int_equal(ibs_source_pmu_read(root, &p, reason, sizeof(reason)), 0);
	assert_string_equal(reason, "");
	return p;
}

/* A load that missed L1 and L2 and came from DRAM of its own node. */
static struct ibs_op_regs dram_load(void)
{
	struct ibs_op_regs r = {0};

	r.op_ctl = IBS_OP_VALID | IBS_OP_ENABLE;
	r.op_data3 = IBS_D3_LD_OP | IBS_D3_DC_MISS | IBS_D3_DC_LIN_ADDR_VALID |
		     IBS_D3_DC_PHY_ADDR_VALID | IBS_D3_L2_MISS | (300ull << 32);
	r.op_data2 = IBS_SRC_DRAM;
	r.dc_linaddr = 0x7f1234567890;
	r.dc_physaddr = 0x20001890;
	return r;
}

/* --- RAW parsing --- */

static void raw_parse_reads_caps_and_seven_registers_at_offset_4(void **state)
{
	uint8_t buf[4 + 7 * 8 + 4]; /* trailing padding, as the kernel adds */
	uint32_t caps = IBS_CAPS_ZEN4 | 0x7ff;
	struct ibs_op_regs r;

	(void)state;
	memset(buf, 0, sizeof(buf));
	memcpy(buf, &caps, 4);
	for (int i = 0; i < 7; i++) {
		uint64_t v = 0x1111111111111111ull * (uint64_t)(i + 1);

		memcpy(buf + 4 + 8 * i, &v, 8);
	}
	assert_int_equal(ibs_raw_parse(buf, sizeof(buf), &r), 0);
	assert_int_equal(r.caps, caps);
	assert_true(r.op_ctl == 0x1111111111111111ull);
	assert_true(r.op_rip == 0x2222222222222222ull);
	assert_true(r.op_data2 == 0x4444444444444444ull);
	assert_true(r.op_data3 == 0x5555555555555555ull);
	assert_true(r.dc_linaddr == 0x6666666666666666ull);
	assert_true(r.dc_physaddr == 0x7777777777777777ull);
}

static void raw_parse_rejects_payload_shorter_than_the_registers(void **state)
{
	uint8_t buf[IBS_RAW_MIN_SIZE] = {0};
	struct ibs_op_regs r = {.caps = 42};

	(void)state;
	assert_int_equal(ibs_raw_parse(buf, IBS_RAW_MIN_SIZE - 1, &r), -EBADMSG);
	assert_int_equal(r.caps, 42);
	assert_int_equal(ibs_raw_parse(NULL, 100, &r), -EBADMSG);
	assert_int_equal(ibs_raw_parse(buf, IBS_RAW_MIN_SIZE, &r), 0);
}

/* --- decoding --- */

static void decodes_local_dram_load_with_addresses_and_latency(void **state)
{
	struct ibs_op_regs r = dram_load();
	struct ibs_op_sample s;

	(void)state;
	ibs_op_decode(&r, &zen3_fixed, &s);
	assert_int_equal(s.kind, ACCESS_LOAD);
	assert_true(s.lin_valid && s.phys_valid);
	assert_true(s.vaddr == 0x7f1234567890ull);
	assert_true(s.paddr == 0x20001890ull);
	assert_int_equal(s.latency, 300);
	/* op LOAD, lvl LOC_RAM|HIT, lvl_num RAM, not remote */
	assert_true(s.data_src == (PERF_MEM_OP_LOAD | LVL(PERF_MEM_LVL_LOC_RAM | PERF_MEM_LVL_HIT) |
				   LVLNUM(PERF_MEM_LVLNUM_RAM)));
	assert_true(s.data_src == 0x1a00001042ull);
	assert_int_equal(mem_src_level(s.data_src), MEM_SRC_LOCAL_RAM);
}

static void decodes_remote_node_dram(void **state)
{
	struct ibs_op_regs r = dram_load();
	struct ibs_op_sample s;

	(void)state;
	r.op_data2 = IBS_SRC_DRAM | IBS_D2_RMT_NODE; /* 0x13 */
	ibs_op_decode(&r, &zen3_fixed, &s);
	assert_true(s.data_src & REMOTE);
	assert_int_equal(mem_src_level(s.data_src), MEM_SRC_REMOTE_RAM);
}

static void decodes_zen4_extension_memory_as_remote_cxl(void **state)
{
	struct ibs_op_regs r = dram_load();
	struct ibs_op_sample s;

	(void)state;
	r.caps = IBS_CAPS_ZEN4;
	/* source 8 = 0b01000: hi (bits 6-7) = 1, lo (bits 0-2) = 0; remote node bit 4 */
	r.op_data2 = 0x50;
	ibs_op_decode(&r, &zen4, &s);
	assert_true((s.data_src >> MEM_SRC_LVLNUM_SHIFT & 0xf) == PERF_MEM_LVLNUM_CXL);
	assert_true(s.data_src & REMOTE);
	assert_int_equal(mem_src_level(s.data_src), MEM_SRC_CXL);
}

static void decodes_zen4_long_latency_dimm_as_pmem(void **state)
{
	struct ibs_op_regs r = dram_load();
	struct ibs_op_sample s;

	(void)state;
	r.caps = IBS_CAPS_ZEN4;
	r.op_data2 = 0x6; /* source 6: hi 0, lo 6 */
	ibs_op_decode(&r, &zen4, &s);
	assert_int_equal(mem_src_level(s.data_src), MEM_SRC_PMEM);
	assert_false(s.data_src & REMOTE);
}

static void ignores_high_data_source_bits_without_zen4_caps(void **state)
{
	struct ibs_op_regs r = dram_load();
	struct ibs_op_sample s;

	(void)state;
	r.op_data2 = 0x50; /* on Zen 3 only bits 0-2 count: source 0, no status */
	ibs_op_decode(&r, &zen3_fixed, &s);
	assert_int_equal(mem_src_level(s.data_src), MEM_SRC_UNKNOWN);
}

static void decodes_zen4_local_cache_hit_as_cache(void **state)
{
	struct ibs_op_regs r = dram_load();
	struct ibs_op_sample s;

	(void)state;
	r.caps = IBS_CAPS_ZEN4;
	r.op_data2 = IBS_SRC_EXT_LOC_CACHE;
	ibs_op_decode(&r, &zen4, &s);
	assert_int_equal(mem_src_level(s.data_src), MEM_SRC_CACHE);
}

static void l1_and_l2_hits_are_cache(void **state)
{
	struct ibs_op_regs r = dram_load();
	struct ibs_op_sample s;

	(void)state;
	r.op_data3 &= ~IBS_D3_DC_MISS;
	ibs_op_decode(&r, &zen3_fixed, &s);
	assert_true((s.data_src >> MEM_SRC_LVLNUM_SHIFT & 0xf) == PERF_MEM_LVLNUM_L1);
	assert_int_equal(s.latency, 0); /* only misses carry a latency */
	r = dram_load();
	r.op_data3 &= ~IBS_D3_L2_MISS;
	ibs_op_decode(&r, &zen3_fixed, &s);
	assert_true((s.data_src >> MEM_SRC_LVLNUM_SHIFT & 0xf) == PERF_MEM_LVLNUM_L2);
	assert_int_equal(mem_src_level(s.data_src), MEM_SRC_CACHE);
}

/* Erratum 1293 (family 19h models 0-0xF): with sw_pf set, OP_DATA2 and l2_miss are garbage.
 * The same registers on a later model say "L2 hit". */
static void erratum_ignores_data2_and_l2_miss_for_software_prefetch(void **state)
{
	struct ibs_op_regs r = dram_load();
	struct ibs_op_sample s;

	(void)state;
	r.op_data3 = (r.op_data3 & ~IBS_D3_L2_MISS) | IBS_D3_SW_PF;
	r.op_data2 = IBS_SRC_DRAM | IBS_D2_RMT_NODE;
	ibs_op_decode(&r, &zen3_erratum, &s);
	assert_true((s.data_src >> MEM_SRC_LVL_SHIFT & 0x3fff) == PERF_MEM_LVL_NA);
	assert_int_equal(mem_src_level(s.data_src), MEM_SRC_UNKNOWN);
	assert_false(s.data_src & REMOTE);

	ibs_op_decode(&r, &zen3_fixed, &s);
	assert_int_equal(mem_src_level(s.data_src), MEM_SRC_CACHE);
	assert_true((s.data_src >> MEM_SRC_LVLNUM_SHIFT & 0xf) == PERF_MEM_LVLNUM_L2);
}

static void erratum_with_no_mab_alloc_reports_fill_buffer(void **state)
{
	struct ibs_op_regs r = dram_load();
	struct ibs_op_sample s;

	(void)state;
	r.op_data3 |= IBS_D3_DC_MISS_NO_MAB_ALLOC; /* l2_miss set, DRAM in OP_DATA2 */
	ibs_op_decode(&r, &zen3_erratum, &s);
	assert_true((s.data_src >> MEM_SRC_LVLNUM_SHIFT & 0xf) == PERF_MEM_LVLNUM_LFB);
	/* without the erratum OP_DATA2 is believed */
	ibs_op_decode(&r, &zen3_fixed, &s);
	assert_int_equal(mem_src_level(s.data_src), MEM_SRC_LOCAL_RAM);
}

static void store_without_physical_address(void **state)
{
	struct ibs_op_regs r = {0};
	struct ibs_op_sample s;

	(void)state;
	r.op_data3 = IBS_D3_ST_OP | IBS_D3_DC_LIN_ADDR_VALID | IBS_D3_DC_MISS | IBS_D3_L2_MISS;
	r.op_data2 = IBS_SRC_DRAM; /* describes loads only: not used for a store */
	r.dc_linaddr = 0x1000;
	r.dc_physaddr = 0xdead000;
	ibs_op_decode(&r, &zen3_fixed, &s);
	assert_int_equal(s.kind, ACCESS_STORE);
	assert_true(s.vaddr == 0x1000);
	assert_false(s.phys_valid);
	assert_true(s.paddr == 0);
	assert_int_equal(mem_src_kind(s.data_src), ACCESS_STORE);
	assert_int_equal(mem_src_level(s.data_src), MEM_SRC_UNKNOWN);
}

static void non_memory_op_has_no_kind(void **state)
{
	struct ibs_op_regs r = {0};
	struct ibs_op_sample s;

	(void)state;
	r.op_data3 = IBS_D3_DC_LIN_ADDR_VALID;
	r.dc_linaddr = 0x1000;
	ibs_op_decode(&r, &zen3_fixed, &s);
	assert_int_equal(s.kind, ACCESS_UNKNOWN);
	assert_false(s.lin_valid);
	assert_int_equal(mem_src_kind(s.data_src), ACCESS_UNKNOWN);
}

static void uncached_access_is_io(void **state)
{
	struct ibs_op_regs r = dram_load();
	struct ibs_op_sample s;

	(void)state;
	r.op_data3 |= IBS_D3_DC_UC_MEM_ACC;
	ibs_op_decode(&r, &zen3_fixed, &s);
	assert_int_equal(mem_src_level(s.data_src), MEM_SRC_IO);
}

/* --- period rules --- */

static void period_is_rounded_down_to_16_and_clamped(void **state)
{
	(void)state;
	assert_true(ibs_period_clamp(100007, false) == 100000);
	assert_true(ibs_period_clamp(0x20, false) == 0x90);
	assert_true(ibs_period_clamp(0x9F, false) == 0x90);
	assert_true(ibs_period_clamp(0xA0, false) == 0xA0);
	assert_true(ibs_period_clamp(0x1000000, false) == 0xFFFF0);
	assert_true(ibs_period_clamp(0x1000000, true) == 0x1000000);
	assert_true(ibs_period_clamp(0x8000000, true) == 0x7FFFFF0);
}

/* --- kernel version --- */

static void parses_kernel_release_strings(void **state)
{
	unsigned ma = 99, mi = 99;

	(void)state;
	assert_int_equal(kernel_release_version("6.1.0-18-amd64", &ma, &mi), 0);
	assert_int_equal(ma, 6);
	assert_int_equal(mi, 1);
	assert_int_equal(kernel_release_version("5.15.0", &ma, &mi), 0);
	assert_int_equal(ma, 5);
	assert_int_equal(mi, 15);
	assert_int_equal(kernel_release_version("6.18.44-fc-v769", &ma, &mi), 0);
	assert_int_equal(mi, 18);
	ma = mi = 7;
	assert_int_equal(kernel_release_version("six", &ma, &mi), -EINVAL);
	assert_int_equal(kernel_release_version("6", &ma, &mi), -EINVAL);
	assert_int_equal(kernel_release_version(NULL, &ma, &mi), -EINVAL);
	assert_int_equal(ma, 7);
	assert_false(ibs_source_kernel_decodes(5, 19));
	assert_false(ibs_source_kernel_decodes(6, 0));
	assert_true(ibs_source_kernel_decodes(6, 1));
	assert_true(ibs_source_kernel_decodes(7, 0));
}

/* --- sysfs and attr --- */

static void reads_zen3_pmu_without_l3missonly(void **state)
{
	struct ibs_pmu p = read_pmu("sysfs-ibs-zen3");

	(void)state;
	assert_int_equal(p.type, 11);
	assert_true(p.cnt_ctl.present);
	assert_int_equal(p.cnt_ctl.word, 0);
	assert_int_equal(p.cnt_ctl.bit, 19);
	assert_false(p.l3missonly.present);
	assert_false(p.swfilt.present);
	assert_false(p.zen4);
}

static void missing_pmu_is_enodev_with_reason(void **state)
{
	char root[PATH_MAX], reason[SAMPLER_REASON_MAX] = "";
	struct ibs_pmu p = {.type = 77};

	(void)state;
	fixture_root("sysfs-one-node", root, sizeof(root));
	assert_int_equal(ibs_source_pmu_read(root, &p, reason, sizeof(reason)), -ENODEV);
	assert_int_equal(p.type, 77);
	assert_non_null(strstr(reason, "no ibs_op PMU ("));
	assert_non_null(strstr(reason, "ibs_op/type: No such file or directory)"));
	reason[0] = '\0';
	assert_int_equal(ibs_source_available(root, reason, sizeof(reason)), -ENODEV);
	assert_non_null(strstr(reason, "no ibs_op PMU"));
	fixture_root("sysfs-ibs-zen4", root, sizeof(root));
	assert_int_equal(ibs_source_available(root, reason, sizeof(reason)), 0);
}

static void malformed_format_file_is_einval_naming_the_file(void **state)
{
	char root[PATH_MAX], reason[SAMPLER_REASON_MAX] = "";
	struct ibs_pmu p;

	(void)state;
	fixture_root("sysfs-ibs-badformat", root, sizeof(root));
	assert_int_equal(ibs_source_pmu_read(root, &p, reason, sizeof(reason)), -EINVAL);
	assert_non_null(strstr(reason, "format/l3missonly: unparsable content"));
}

static const struct ibs_opts opts_61 = {.period = 100000,
					.l3_miss_only = true,
					.phys_addr = false,
					.kernel_major = 6,
					.kernel_minor = 1};

static void zen3_attr_counts_ops_without_l3_filter_or_exclude_bits(void **state)
{
	struct ibs_pmu p = read_pmu("sysfs-ibs-zen3");
	struct perf_event_attr a;

	(void)state;
	ibs_source_build_attr(&p, &opts_61, &a);
	assert_int_equal(a.type, 11);
	assert_int_equal(a.size, sizeof(a));
	assert_true(a.config == IBS_OP_CNT_CTL);
	assert_true(a.config1 == 0 && a.config2 == 0);
	assert_true(a.sample_period == 100000);
	assert_false(a.freq);
	assert_int_equal(a.precise_ip, 0);
	assert_false(a.exclude_user || a.exclude_kernel || a.exclude_hv || a.exclude_idle);
	assert_true(a.sample_type == (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |
				      PERF_SAMPLE_CPU | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_WEIGHT));
	assert_true(a.use_clockid);
	assert_int_equal(a.clockid, CLOCK_MONOTONIC);
}

static void zen4_attr_sets_l3_miss_only_when_asked(void **state)
{
	struct ibs_pmu p = read_pmu("sysfs-ibs-zen4");
	struct ibs_opts o = opts_61;
	struct perf_event_attr a;

	(void)state;
	assert_true(p.zen4);
	ibs_source_build_attr(&p, &o, &a);
	assert_true(a.config == (IBS_OP_CNT_CTL | IBS_OP_L3MISSONLY));
	o.l3_miss_only = false;
	ibs_source_build_attr(&p, &o, &a);
	assert_true(a.config == IBS_OP_CNT_CTL);
	assert_false(a.exclude_kernel);
}

static void swfilt_kernel_excludes_kernel_samples_in_software(void **state)
{
	struct ibs_pmu p = read_pmu("sysfs-ibs-swfilt");
	struct perf_event_attr a;

	(void)state;
	ibs_source_build_attr(&p, &opts_61, &a);
	assert_true(a.config2 == 1);
	assert_true(a.exclude_kernel && a.exclude_hv);
	assert_false(a.exclude_user);
}

static void old_kernel_asks_for_raw_and_permitted_phys_addr(void **state)
{
	struct ibs_pmu p = read_pmu("sysfs-ibs-zen3");
	struct ibs_opts o = opts_61;
	struct perf_event_attr a;

	(void)state;
	o.kernel_major = 5;
	o.kernel_minor = 15;
	o.phys_addr = true;
	ibs_source_build_attr(&p, &o, &a);
	assert_true(a.sample_type & PERF_SAMPLE_RAW);
	assert_true(a.sample_type & PERF_SAMPLE_PHYS_ADDR);
	o.kernel_major = 6;
	o.kernel_minor = 1;
	ibs_source_build_attr(&p, &o, &a);
	assert_false(a.sample_type & PERF_SAMPLE_RAW);
}

static void attr_period_follows_extended_count_capability(void **state)
{
	struct ibs_pmu p = read_pmu("sysfs-ibs-zen4");
	struct ibs_opts o = opts_61;
	struct perf_event_attr a;

	(void)state;
	o.period = 0x2000008;
	ibs_source_build_attr(&p, &o, &a);
	assert_true(a.sample_period == 0xFFFF0);
	p.cpuid_caps = IBS_CAPS_OPCNTEXT | 1;
	ibs_source_build_attr(&p, &o, &a);
	assert_true(a.sample_period == 0x2000000);
	o.period = 0x17;
	ibs_source_build_attr(&p, &o, &a);
	assert_true(a.sample_period == 0x90);
}

/* --- conversion --- */

static struct perf_sample kernel_decoded(uint64_t addr, uint64_t data_src)
{
	struct perf_sample s;

	memset(&s, 0, sizeof(s));
	s.present = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU |
		    PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_WEIGHT;
	s.pid = 100;
	s.tid = 101;
	s.time = 5000;
	s.cpu = 1;
	s.addr = addr;
	s.data_src = data_src;
	return s;
}

static void converts_kernel_decoded_cxl_load_and_drops_local_dram(void **state)
{
	struct ibs_pmu p = read_pmu("sysfs-ibs-zen4");
	struct ibs_convert c;
	struct stats st;
	struct access_event ev;
	struct perf_sample s;

	(void)state;
	stats_init(&st, 1);
	ibs_source_convert_init(&c, &p, &opts_61, NULL, &st);
	s = kernel_decoded(0x7f0000001000, PERF_MEM_OP_LOAD | LVLNUM(PERF_MEM_LVLNUM_CXL));
	memset(&ev, 0, sizeof(ev));
	assert_int_equal(ibs_source_convert(&c, &s, &ev), SAMPLE_KEPT);
	assert_int_equal(ev.pid, 100);
	assert_int_equal(ev.tid, 101);
	assert_true(ev.vaddr == 0x7f0000001000);
	assert_int_equal(ev.cpu, 1);
	assert_int_equal(ev.kind, ACCESS_LOAD);
	assert_int_equal(ev.source, SRC_IBS);
	assert_true(ev.time_ns == 5000);

	s = kernel_decoded(0x7f0000001000, 0x1a00001042ull); /* local DRAM load */
	assert_int_equal(ibs_source_convert(&c, &s, &ev), SAMPLE_DROP_NEAR_SOURCE);
	s = kernel_decoded(0, PERF_MEM_OP_LOAD | LVLNUM(PERF_MEM_LVLNUM_CXL)); /* no lin addr */
	assert_int_equal(ibs_source_convert(&c, &s, &ev), SAMPLE_DROP_NO_ADDR);
	s = kernel_decoded(0x7f0000001000, PERF_MEM_OP_NA); /* not a load or store */
	assert_int_equal(ibs_source_convert(&c, &s, &ev), SAMPLE_DROP_NOT_MEMOP);
	assert_true(st.src[SRC_IBS][SS_SAMPLES_DROPPED] == 3);
}

static void converts_raw_sample_on_old_kernel_and_counts_short_raw(void **state)
{
	struct ibs_pmu p = read_pmu("sysfs-ibs-zen3");
	struct ibs_opts o = opts_61;
	struct ibs_convert c;
	struct stats st;
	struct access_event ev;
	struct perf_sample s;
	struct ibs_op_regs r = dram_load();
	uint8_t raw[IBS_RAW_MIN_SIZE + 4] = {0};
	uint64_t regs[7];

	(void)state;
	o.kernel_major = 5;
	o.kernel_minor = 10;
	o.phys_addr = false;
	p.cpu = zen3_fixed;
	r.op_data2 = IBS_SRC_DRAM | IBS_D2_RMT_NODE;
	regs[0] = r.op_ctl, regs[1] = 0, regs[2] = 0, regs[3] = r.op_data2, regs[4] = r.op_data3;
	regs[5] = r.dc_linaddr, regs[6] = r.dc_physaddr;
	memcpy(raw + 4, regs, sizeof(regs));
	stats_init(&st, 1);
	ibs_source_convert_init(&c, &p, &o, NULL, &st);
	s = kernel_decoded(0, 0); /* what a 5.10 kernel leaves in ADDR/DATA_SRC */
	s.present |= PERF_SAMPLE_RAW;
	s.raw = raw;
	s.raw_size = sizeof(raw);
	assert_int_equal(ibs_source_convert(&c, &s, &ev), SAMPLE_KEPT);
	assert_true(ev.vaddr == 0x7f1234567890ull);
	assert_true(ev.paddr == 0); /* not permitted */
	assert_int_equal(ev.kind, ACCESS_LOAD);

	s.raw_size = IBS_RAW_MIN_SIZE - 8;
	assert_int_equal(ibs_source_convert(&c, &s, &ev), SAMPLE_DROP_MALFORMED);
	s.raw = NULL;
	assert_int_equal(ibs_source_convert(&c, &s, &ev), SAMPLE_DROP_MALFORMED);
	assert_true(c.filter.dropped[SAMPLE_DROP_MALFORMED] == 2);
	assert_true(st.src[SRC_IBS][SS_SAMPLES_DROPPED] == 2);
}

/* --- the running source on perf_sampler, with faked syscalls --- */

static void discard(void *ctx, const struct pghotd_config *cfg, const struct access_event *ev,
		    size_t n)
{
	(void)ctx, (void)cfg, (void)ev, (void)n;
}

static void start_opens_the_built_attr_and_marks_source_active(void **state)
{
	struct fake_perf f = {0};
	const struct perf_sampler_ops ops = fake_perf_ops(&f);
	static const int cpus[] = {0};
	struct pghotd_config *cfg = NULL;
	struct ibs_source *src = NULL;
	struct ibs_source_params p;
	struct stats st;
	char root[PATH_MAX], reason[SAMPLER_REASON_MAX] = "";

	(void)state;
	assert_int_equal(config_new_defaults(&cfg), 0);
	cfg->sources.ibs.period = 0x10008;
	stats_init(&st, 1);
	fixture_root("sysfs-ibs-zen4", root, sizeof(root));
	memset(&p, 0, sizeof(p));
	p.sysfs_root = root;
	p.kernel_release = "6.8.0-40-generic";
	p.cfg = cfg;
	p.sampler = (struct perf_sampler_params){.ring_pages = 2,
						 .drain_interval_ms = 1000,
						 .cpus = cpus,
						 .nr_cpus = 1,
						 .pid = -1,
						 .page_size = 4096,
						 .stats = &st,
						 .sink = {discard, NULL},
						 .cfg = cfg,
						 .ops = &ops};
	assert_int_equal(ibs_source_start(&p, &src, reason, sizeof(reason)), 0);
	assert_non_null(src);
	assert_int_equal(f.opens, 1);
	assert_int_equal(f.cpu, 0);
	assert_int_equal(f.pid, -1);
	assert_int_equal(f.last.type, 11);
	assert_true(f.last.config == (IBS_OP_CNT_CTL | IBS_OP_L3MISSONLY));
	assert_true(f.last.sample_period == 0x10000);
	assert_false(f.last.sample_type & PERF_SAMPLE_RAW);
	assert_true(ibs_source_period(src) == 0x10000);
	assert_true(st.src_active[SRC_IBS] == 1);
	ibs_source_stop(src);
	assert_int_equal(f.maps, 0);
	assert_true(st.src_active[SRC_IBS] == 0);

	/* a refused open: the errno in the reason, nothing left open, not active */
	f = (struct fake_perf){.open_err = -EACCES};
	src = NULL;
	assert_int_equal(ibs_source_start(&p, &src, reason, sizeof(reason)), -EACCES);
	assert_null(src);
	assert_non_null(strstr(reason, "Permission denied"));
	assert_int_equal(f.maps, 0);
	assert_true(st.src_active[SRC_IBS] == 0);

	/* no PMU */
	fixture_root("sysfs-one-node", root, sizeof(root));
	assert_int_equal(ibs_source_start(&p, &src, reason, sizeof(reason)), -ENODEV);
	assert_non_null(strstr(reason, "no ibs_op PMU"));
	config_free(cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(raw_parse_reads_caps_and_seven_registers_at_offset_4),
	    cmocka_unit_test(raw_parse_rejects_payload_shorter_than_the_registers),
	    cmocka_unit_test(decodes_local_dram_load_with_addresses_and_latency),
	    cmocka_unit_test(decodes_remote_node_dram),
	    cmocka_unit_test(decodes_zen4_extension_memory_as_remote_cxl),
	    cmocka_unit_test(decodes_zen4_long_latency_dimm_as_pmem),
	    cmocka_unit_test(ignores_high_data_source_bits_without_zen4_caps),
	    cmocka_unit_test(decodes_zen4_local_cache_hit_as_cache),
	    cmocka_unit_test(l1_and_l2_hits_are_cache),
	    cmocka_unit_test(erratum_ignores_data2_and_l2_miss_for_software_prefetch),
	    cmocka_unit_test(erratum_with_no_mab_alloc_reports_fill_buffer),
	    cmocka_unit_test(store_without_physical_address),
	    cmocka_unit_test(non_memory_op_has_no_kind),
	    cmocka_unit_test(uncached_access_is_io),
	    cmocka_unit_test(period_is_rounded_down_to_16_and_clamped),
	    cmocka_unit_test(parses_kernel_release_strings),
	    cmocka_unit_test(reads_zen3_pmu_without_l3missonly),
	    cmocka_unit_test(missing_pmu_is_enodev_with_reason),
	    cmocka_unit_test(malformed_format_file_is_einval_naming_the_file),
	    cmocka_unit_test(zen3_attr_counts_ops_without_l3_filter_or_exclude_bits),
	    cmocka_unit_test(zen4_attr_sets_l3_miss_only_when_asked),
	    cmocka_unit_test(swfilt_kernel_excludes_kernel_samples_in_software),
	    cmocka_unit_test(old_kernel_asks_for_raw_and_permitted_phys_addr),
	    cmocka_unit_test(attr_period_follows_extended_count_capability),
	    cmocka_unit_test(converts_kernel_decoded_cxl_load_and_drops_local_dram),
	    cmocka_unit_test(converts_raw_sample_on_old_kernel_and_counts_short_raw),
	    cmocka_unit_test(start_opens_the_built_attr_and_marks_source_active),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
