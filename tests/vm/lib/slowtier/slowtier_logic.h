/* slowtier_logic: the pure parts of the slow tier's QEMU plugin (slowtier.c): its arguments,
 * the API level check, the slow ranges and the per-vCPU line filter, apart so
 * test_slowtier_logic drives them without QEMU. */
#ifndef PGHOTD_SLOWTIER_LOGIC_H
#define PGHOTD_SLOWTIER_LOGIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SLOWTIER_MAX_RANGES 8
/* The line filter's granule: a cache line. */
#define SLOWTIER_LINE_SHIFT 6

/* [start, end) in the addresses qemu_plugin_hwaddr_phys_addr() returns. */
struct slowtier_range {
	uint64_t start, end;
};

struct slowtier_config {
	struct slowtier_range range[SLOWTIER_MAX_RANGES];
	size_t nranges;
	uint64_t cost_ps; /* extra cost per slow access at start (ns=, in picoseconds) */
	bool channel;	  /* the guest may change the cost (channel.h); channel=off refuses */
	bool check;	  /* check=on: print the configuration and refuse to install */
	bool help;
};

/* Parses the plugin's "name=value" arguments: slow=START-END (bytes, decimal or 0x hex, END
 * exclusive; repeatable), ns=NS (decimal, fractions allowed), channel=on|off, check=on|off,
 * help (alone or =on). Returns 0, or -EINVAL with a message naming the argument in err (cfg
 * then undefined). At least one slow range is required unless help is asked for. */
int slowtier_config_parse(int argc, char **argv, struct slowtier_config *cfg, char *err,
			  size_t errlen);

/* Whether this plugin, written for API level `want`, can run under a QEMU offering levels
 * [min, cur]; when not, a message saying which QEMU to use goes to err. */
bool slowtier_api_ok(int want, int min, int cur, char *err, size_t errlen);

/* Whether addr falls in one of cfg's slow ranges. */
bool slowtier_is_slow(const struct slowtier_config *cfg, uint64_t addr);

/* A vCPU's two most recent slow cache lines, most recent first: an access to either is not
 * charged again (the line would be in the core's cache), so a page copy pays per line, not per
 * byte, and a copy within the slow node (two lines alternating) per line too. */
struct slowtier_lines {
	uint64_t line[2];
};

void slowtier_lines_init(struct slowtier_lines *l);
/* Records a slow access at addr; true when its line was one of the two most recent. */
bool slowtier_lines_seen(struct slowtier_lines *l, uint64_t addr);

#endif
