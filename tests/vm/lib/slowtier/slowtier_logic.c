/* slowtier_logic: see slowtier_logic.h. */
#include "slowtier_logic.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A whole-string unsigned number (decimal, or hex after 0x) into *v; false on anything else. */
static bool parse_u64(const char *s, uint64_t *v)
{
	char *end;
	if (*s == '\0' || *s == '-' || *s == '+')
		return false;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 0);
	if (errno != 0 || *end != '\0')
		return false;
	*v = x;
	return true;
}

static bool parse_range(const char *s, struct slowtier_range *r)
{
	const char *dash = strchr(s, '-');
	char first[32];
	if (dash == NULL || (size_t)(dash - s) >= sizeof(first))
		return false;
	memcpy(first, s, (size_t)(dash - s));
	first[dash - s] = '\0';
	return parse_u64(first, &r->start) && parse_u64(dash + 1, &r->end) && r->start < r->end;
}

/* ns=NS as picoseconds: a decimal number of nanoseconds, 0 to 1 ms. */
static bool parse_ns(const char *s, uint64_t *ps)
{
	char *end;
	errno = 0;
	double ns = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(ns >= 0 && ns <= 1e6))
		return false;
	*ps = (uint64_t)llround(ns * 1000);
	return true;
}

static bool parse_bool(const char *s, bool *b)
{
	static const char *const yes[] = {"on", "yes", "true"}, *const no[] = {"off", "no",
									       "false"};
	for (size_t i = 0; i < 3; i++) {
		if (strcmp(s, yes[i]) == 0 || strcmp(s, no[i]) == 0) {
			*b = strcmp(s, yes[i]) == 0;
			return true;
		}
	}
	return false;
}

/* One argument into cfg; false when it is unknown or its value does not parse. */
static bool parse_arg(const char *arg, struct slowtier_config *cfg)
{
	const char *eq = strchr(arg, '=');
	const char *val = eq ? eq + 1 : "on";
	size_t n = eq ? (size_t)(eq - arg) : strlen(arg);
	if (n == 4 && strncmp(arg, "slow", 4) == 0) {
		if (cfg->nranges == SLOWTIER_MAX_RANGES)
			return false;
		return parse_range(val, &cfg->range[cfg->nranges++]);
	}
	if (n == 2 && strncmp(arg, "ns", 2) == 0)
		return parse_ns(val, &cfg->cost_ps);
	if (n == 7 && strncmp(arg, "channel", 7) == 0)
		return parse_bool(val, &cfg->channel);
	if (n == 5 && strncmp(arg, "check", 5) == 0)
		return parse_bool(val, &cfg->check);
	if (n == 6 && strncmp(arg, "kernel", 6) == 0) {
		static const char *const names[] = {"all", "copies", "none"};
		for (int k = 0; k < 3; k++)
			if (strcmp(val, names[k]) == 0) {
				cfg->kernel = (enum slowtier_kernel)k;
				return true;
			}
		return false;
	}
	if (n == 4 && strncmp(arg, "user", 4) == 0) {
		if (strcmp(val, "announced") == 0)
			cfg->user = SLOWTIER_USER_ANNOUNCED;
		else if (strcmp(val, "all") == 0)
			cfg->user = SLOWTIER_USER_ALL;
		else
			return false;
		return true;
	}
	if (n == 4 && strncmp(arg, "help", 4) == 0)
		return parse_bool(val, &cfg->help);
	return false;
}

int slowtier_config_parse(int argc, char **argv, struct slowtier_config *cfg, char *err,
			  size_t errlen)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->channel = true;
	cfg->kernel = SLOWTIER_KERNEL_NONE;
	for (int i = 0; i < argc; i++) {
		if (!parse_arg(argv[i], cfg)) {
			snprintf(err, errlen,
				 "bad argument '%s' (slow=START-END, ns=NS, channel=on|off, "
				 "check=on, kernel=all|copies|none, user=announced|all, help; at "
				 "most %d "
				 "ranges)",
				 argv[i], SLOWTIER_MAX_RANGES);
			return -EINVAL;
		}
	}
	if (cfg->nranges == 0 && !cfg->help) {
		snprintf(err, errlen, "no slow=START-END range given");
		return -EINVAL;
	}
	return 0;
}

bool slowtier_api_ok(int want, int min, int cur, char *err, size_t errlen)
{
	if (want >= min && want <= cur)
		return true;
	snprintf(err, errlen,
		 "this plugin speaks QEMU's plugin API version %d (QEMU 7.2's), and this QEMU "
		 "loads versions %d to %d only: run the testbed with Debian 12's "
		 "qemu-system-x86 7.2, or port tests/vm/lib/slowtier/qemu_plugin_api.h",
		 want, min, cur);
	return false;
}

bool slowtier_is_rep_copy(const uint8_t *insn, size_t n)
{
	bool rep = false;
	size_t i = 0;
	for (; i < n; i++) {
		uint8_t b = insn[i];
		if (b == 0xf3 || b == 0xf2)
			rep = true;
		else if (!(b == 0x66 || b == 0x67 || b == 0x2e || b == 0x3e || b == 0x26 ||
			   b == 0x64 || b == 0x65 || b == 0x36))
			break;
	}
	if (i < n && (insn[i] & 0xf0) == 0x40) /* REX */
		i++;
	if (!rep || i >= n)
		return false;
	uint8_t op = insn[i];
	return op == 0xa4 || op == 0xa5 || op == 0xaa || op == 0xab;
}

void slowtier_hooks_init(struct slowtier_hooks *h)
{
	atomic_init(&h->n, 0);
	atomic_flag_clear(&h->lock);
	atomic_init(&h->refused, 0);
}

bool slowtier_hooks_add(struct slowtier_hooks *h, uint64_t start, uint64_t end)
{
	if (end <= start) {
		atomic_fetch_add_explicit(&h->refused, 1, memory_order_relaxed); /* a counter */
		return false;
	}
	/* acquire pairs with the release clear below: the last adder's writes are seen. */
	while (atomic_flag_test_and_set_explicit(&h->lock, memory_order_acquire))
		;
	size_t n = atomic_load_explicit(&h->n, memory_order_relaxed); /* adders hold the lock */
	bool ok = n < SLOWTIER_MAX_HOOKS;
	if (ok) {
		h->r[n].start = start;
		h->r[n].end = end;
		/* release pairs with the acquire in slowtier_hooks_has: a reader that sees n + 1
		 * sees the range's fields. */
		atomic_store_explicit(&h->n, n + 1, memory_order_release);
	} else {
		atomic_fetch_add_explicit(&h->refused, 1, memory_order_relaxed);
	}
	atomic_flag_clear_explicit(&h->lock, memory_order_release);
	return ok;
}

bool slowtier_hooks_has(struct slowtier_hooks *h, uint64_t vaddr)
{
	/* acquire pairs with the release store in slowtier_hooks_add. */
	size_t n = atomic_load_explicit(&h->n, memory_order_acquire);
	for (size_t i = 0; i < n; i++)
		if (vaddr >= h->r[i].start && vaddr < h->r[i].end)
			return true;
	return false;
}

bool slowtier_insn_hooked(const struct slowtier_config *cfg, struct slowtier_hooks *hooks,
			  uint64_t vaddr, const uint8_t *insn, size_t n)
{
	if (vaddr < UINT64_C(0xffff800000000000))
		return cfg->user == SLOWTIER_USER_ALL || slowtier_hooks_has(hooks, vaddr);
	switch (cfg->kernel) {
	case SLOWTIER_KERNEL_ALL:
		return true;
	case SLOWTIER_KERNEL_COPIES:
		return slowtier_is_rep_copy(insn, n);
	default:
		return false;
	}
}

bool slowtier_is_slow(const struct slowtier_config *cfg, uint64_t addr)
{
	for (size_t i = 0; i < cfg->nranges; i++)
		if (addr >= cfg->range[i].start && addr < cfg->range[i].end)
			return true;
	return false;
}

void slowtier_lines_init(struct slowtier_lines *l)
{
	l->line[0] = l->line[1] = UINT64_MAX;
}

bool slowtier_lines_seen(struct slowtier_lines *l, uint64_t addr)
{
	uint64_t line = addr >> SLOWTIER_LINE_SHIFT;
	if (line == l->line[0])
		return true;
	bool seen = line == l->line[1];
	l->line[1] = l->line[0];
	l->line[0] = line;
	return seen;
}
