/* Tests of the slow tier plugin's pure logic: which addresses pay, what its arguments mean, and
 * when it refuses to load decide what every --slow-tier run measures. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "channel.h"
#include "slowtier_logic.h"

#define ARGS(...) (char *[]){__VA_ARGS__}, sizeof((char *[]){__VA_ARGS__}) / sizeof(char *)

static int parse(char **argv, size_t argc, struct slowtier_config *cfg, char *err)
{
	return slowtier_config_parse((int)argc, argv, cfg, err, 256);
}

/* run's arguments: a node's range in hex, the cost off at start, the channel on by default. */
static void parses_ranges_cost_and_defaults(void **state)
{
	(void)state;
	struct slowtier_config cfg;
	char err[256];
	assert_int_equal(parse(ARGS("slow=0x40000000-0x68000000", "ns=0"), &cfg, err), 0);
	assert_int_equal(cfg.nranges, 1);
	assert_int_equal(cfg.range[0].start, 0x40000000);
	assert_int_equal(cfg.range[0].end, 0x68000000);
	assert_int_equal(cfg.cost_ps, 0);
	assert_true(cfg.channel);
	assert_false(cfg.check);
	assert_int_equal(
	    parse(ARGS("slow=100-200", "slow=0x1000-0x2000", "ns=87.5", "channel=off", "check=on"),
		  &cfg, err),
	    0);
	assert_int_equal(cfg.nranges, 2);
	assert_int_equal(cfg.range[1].start, 0x1000);
	assert_int_equal(cfg.cost_ps, 87500);
	assert_false(cfg.channel);
	assert_true(cfg.check);
}

/* A typo must stop QEMU, not boot a guest whose slow node is silently fast. */
static void rejects_bad_arguments_naming_them(void **state)
{
	(void)state;
	struct slowtier_config cfg;
	char err[256];
	static const char *const bad[] = {
	    "slow=0x2000-0x1000", "slow=0x1000", "slow=0x1000-", "slow=-1-5",
	    "slow=1-2x",	  "ns=-1",	 "ns=abc",	 "ns=",
	    "channel=maybe",	  "speed=2",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *argv[] = {"slow=0-4096", (char *)bad[i]};
		assert_int_equal(parse(argv, 2, &cfg, err), -EINVAL);
		assert_non_null(strstr(err, bad[i]));
	}
	assert_int_equal(parse(ARGS("ns=10"), &cfg, err), -EINVAL);
	assert_non_null(strstr(err, "no slow="));
	assert_int_equal(parse(ARGS("help"), &cfg, err), 0);
	assert_true(cfg.help);
	char *many[SLOWTIER_MAX_RANGES + 1];
	for (size_t i = 0; i <= SLOWTIER_MAX_RANGES; i++)
		many[i] = "slow=0-1";
	assert_int_equal(parse(many, SLOWTIER_MAX_RANGES + 1, &cfg, err), -EINVAL);
}

/* Version 1 runs under QEMU 7.2 (offers 0 to 1); a QEMU that dropped it gets a clear message. */
static void api_check_accepts_its_version_and_explains_a_refusal(void **state)
{
	(void)state;
	char err[256] = "";
	assert_true(slowtier_api_ok(1, 0, 1, err, sizeof(err)));
	assert_true(slowtier_api_ok(1, 1, 3, err, sizeof(err)));
	assert_false(slowtier_api_ok(1, 2, 4, err, sizeof(err)));
	assert_non_null(strstr(err, "version 1"));
	assert_non_null(strstr(err, "2 to 4"));
	assert_false(slowtier_api_ok(1, 0, 0, err, sizeof(err)));
}

/* User space is always hooked; the kernel's instructions as kernel= says: none by default,
 * or its string copies and fills alone (the migration's page copy, clear_page), or all. */
static void hooks_user_space_and_the_kernels_copies(void **state)
{
	(void)state;
	struct slowtier_config cfg;
	static struct slowtier_hooks hooks;
	slowtier_hooks_init(&hooks);
	char err[256];
	char *args[] = {"slow=0x1000-0x2000", "user=all"};
	assert_int_equal(slowtier_config_parse(2, args, &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.kernel, SLOWTIER_KERNEL_NONE);
	assert_false(slowtier_insn_hooked(&cfg, &hooks, UINT64_C(0xffffffff81000000),
					  (const uint8_t *)"\xf3\x48\xa5", 3));
	char *copies[] = {"slow=0x1000-0x2000", "kernel=copies", "user=all"};
	assert_int_equal(slowtier_config_parse(3, copies, &cfg, err, sizeof(err)), 0);
	const uint8_t movsq[] = {0xf3, 0x48, 0xa5}, stosb[] = {0xf3, 0xaa},
		      movsb_seg[] = {0x66, 0xf3, 0xa4}, load[] = {0x48, 0x8b, 0x07},
		      movs_norep[] = {0x48, 0xa5}, cmps[] = {0xf3, 0xa6};
	const uint64_t kern = UINT64_C(0xffffffff81000000), user = 0x400000;
	assert_true(slowtier_insn_hooked(&cfg, &hooks, user, load, sizeof(load)));
	assert_true(slowtier_insn_hooked(&cfg, &hooks, kern, movsq, sizeof(movsq)));
	assert_true(slowtier_insn_hooked(&cfg, &hooks, kern, stosb, sizeof(stosb)));
	assert_true(slowtier_insn_hooked(&cfg, &hooks, kern, movsb_seg, sizeof(movsb_seg)));
	assert_false(slowtier_insn_hooked(&cfg, &hooks, kern, load, sizeof(load)));
	assert_false(slowtier_insn_hooked(&cfg, &hooks, kern, movs_norep, sizeof(movs_norep)));
	assert_false(slowtier_insn_hooked(&cfg, &hooks, kern, cmps, sizeof(cmps)));
	assert_false(slowtier_insn_hooked(&cfg, &hooks, kern, movsq, 2)); /* cut short */
	char *all[] = {"slow=0x1000-0x2000", "kernel=all"},
	     *none[] = {"slow=0x1000-0x2000", "kernel=none", "user=all"},
	     *bad[] = {"slow=0x1000-0x2000", "kernel=some"};
	assert_int_equal(slowtier_config_parse(2, all, &cfg, err, sizeof(err)), 0);
	assert_true(slowtier_insn_hooked(&cfg, &hooks, kern, load, sizeof(load)));
	assert_int_equal(slowtier_config_parse(3, none, &cfg, err, sizeof(err)), 0);
	assert_false(slowtier_insn_hooked(&cfg, &hooks, kern, movsq, sizeof(movsq)));
	assert_true(slowtier_insn_hooked(&cfg, &hooks, user, load, sizeof(load)));
	assert_int_equal(slowtier_config_parse(2, bad, &cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "kernel=some"));
}

/* By default user space is hooked only where a process announced its code (channel.h): the
 * workload and the chase, not pghotd; the ranges are half open, and refused when empty or
 * beyond SLOWTIER_MAX_HOOKS. The announcement round-trips through the channel's decoding. */
static void hooks_only_announced_user_code(void **state)
{
	(void)state;
	struct slowtier_config cfg;
	static struct slowtier_hooks hooks;
	slowtier_hooks_init(&hooks);
	char err[256];
	char *args[] = {"slow=0x1000-0x2000"};
	assert_int_equal(slowtier_config_parse(1, args, &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.user, SLOWTIER_USER_ANNOUNCED);
	const uint8_t load[] = {0x48, 0x8b, 0x07};
	assert_false(slowtier_insn_hooked(&cfg, &hooks, 0x555555554000, load, sizeof(load)));
	assert_true(slowtier_hooks_add(&hooks, 0x555555554000, 0x555555560000));
	assert_true(slowtier_insn_hooked(&cfg, &hooks, 0x555555554000, load, sizeof(load)));
	assert_true(slowtier_insn_hooked(&cfg, &hooks, 0x55555555ffff, load, sizeof(load)));
	assert_false(slowtier_insn_hooked(&cfg, &hooks, 0x555555560000, load, sizeof(load)));
	assert_false(slowtier_insn_hooked(&cfg, &hooks, 0x7f0000001000, load, sizeof(load)));
	assert_false(slowtier_hooks_add(&hooks, 0x9000, 0x9000));
	for (uint64_t i = 1; i < SLOWTIER_MAX_HOOKS; i++)
		assert_true(slowtier_hooks_add(&hooks, i << 20, (i << 20) + 4096));
	assert_false(slowtier_hooks_add(&hooks, UINT64_C(1) << 40, (UINT64_C(1) << 40) + 4096));
	assert_int_equal(atomic_load(&hooks.refused), 2);
	const uint8_t start[] = {0x48, 0x8b, 0x87, 0xde, 0xc1, 0xa7, 0x51},
		      end[] = {0x48, 0x8b, 0x87, 0xde, 0xc2, 0xa7, 0x51},
		      cost[] = {0x48, 0x8b, 0x87, 0xde, 0xc0, 0xa7, 0x51},
		      other[] = {0x48, 0x8b, 0x87, 0xde, 0xc3, 0xa7, 0x51};
	assert_int_equal(slowtier_channel_message(start, 7), SLOWTIER_MSG_HOOK_START);
	assert_int_equal(slowtier_channel_message(end, 7), SLOWTIER_MSG_HOOK_END);
	assert_int_equal(slowtier_channel_message(cost, 7), SLOWTIER_MSG_COST);
	assert_int_equal(slowtier_channel_message(other, 7), SLOWTIER_MSG_NONE);
	char *bad[] = {"slow=0x1000-0x2000", "user=some"};
	assert_int_equal(slowtier_config_parse(2, bad, &cfg, err, sizeof(err)), -EINVAL);
}

static void ranges_are_half_open(void **state)
{
	(void)state;
	struct slowtier_config cfg;
	char err[256];
	assert_int_equal(
	    parse(ARGS("slow=0x1000-0x2000", "slow=0x100000000-0x120000000"), &cfg, err), 0);
	assert_false(slowtier_is_slow(&cfg, 0xfff));
	assert_true(slowtier_is_slow(&cfg, 0x1000));
	assert_true(slowtier_is_slow(&cfg, 0x1fff));
	assert_false(slowtier_is_slow(&cfg, 0x2000));
	assert_true(slowtier_is_slow(&cfg, 0x11fffffffull));
	assert_false(slowtier_is_slow(&cfg, 0x120000000ull));
}

/* A page copy reads 512 words of 64 lines: 64 charges. A copy within the slow node alternates
 * two lines: each line is charged once too. A chase (a new line every load) pays every load. */
static void line_filter_charges_each_line_once_per_copy(void **state)
{
	(void)state;
	struct slowtier_lines l;
	slowtier_lines_init(&l);
	int charged = 0;
	for (uint64_t a = 0x10000; a < 0x11000; a += 8)
		charged += !slowtier_lines_seen(&l, a);
	assert_int_equal(charged, 64);
	slowtier_lines_init(&l);
	charged = 0;
	for (uint64_t off = 0; off < 0x1000; off += 8) {
		charged += !slowtier_lines_seen(&l, 0x20000 + off);
		charged += !slowtier_lines_seen(&l, 0x80000 + off);
	}
	assert_int_equal(charged, 128);
	slowtier_lines_init(&l);
	charged = 0;
	for (uint64_t p = 0; p < 100; p++)
		charged += !slowtier_lines_seen(&l, p * 4096 + (p % 64) * 64);
	assert_int_equal(charged, 100);
	assert_false(slowtier_lines_seen(&l, 0)); /* three lines back: charged again */
}

/* The guest's message and the plugin's reading of it agree, and only the exact load is one. */
static void channel_round_trips_and_matches_only_its_instruction(void **state)
{
	(void)state;
	uint64_t region = UINT64_C(0x7f0000000000);
	for (uint64_t ps = 0; ps <= SLOWTIER_CHANNEL_MAX_PS; ps += 999983)
		assert_int_equal(slowtier_channel_decode(slowtier_channel_encode(region, ps) +
							 SLOWTIER_CHANNEL_DISP),
				 ps);
	const uint8_t insn[] = {0x48, 0x8b, 0x87, 0xde, 0xc0, 0xa7, 0x51};
	assert_true(slowtier_channel_is_insn(insn, sizeof(insn)));
	const uint8_t other_disp[] = {0x48, 0x8b, 0x87, 0xdf, 0xc0, 0xa7, 0x51};
	assert_false(slowtier_channel_is_insn(other_disp, sizeof(other_disp)));
	const uint8_t other_reg[] = {0x48, 0x8b, 0x86, 0xde, 0xc0, 0xa7, 0x51};
	assert_false(slowtier_channel_is_insn(other_reg, sizeof(other_reg)));
	assert_false(slowtier_channel_is_insn(insn, 6));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(parses_ranges_cost_and_defaults),
	    cmocka_unit_test(rejects_bad_arguments_naming_them),
	    cmocka_unit_test(api_check_accepts_its_version_and_explains_a_refusal),
	    cmocka_unit_test(hooks_user_space_and_the_kernels_copies),
	    cmocka_unit_test(hooks_only_announced_user_code),
	    cmocka_unit_test(ranges_are_half_open),
	    cmocka_unit_test(line_filter_charges_each_line_once_per_copy),
	    cmocka_unit_test(channel_round_trips_and_matches_only_its_instruction),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
