/* slowtier_logic: the pure parts of the slow tier's QEMU plugin (slowtier.c): its arguments,
 * the API level check, the slow ranges and the per-vCPU line filter, apart so
 * test_slowtier_logic drives them without QEMU. */
#ifndef PGHOTD_SLOWTIER_LOGIC_H
#define PGHOTD_SLOWTIER_LOGIC_H

#include <stdatomic.h>
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

/* Which of the guest kernel's instructions the plugin hooks (kernel=): every one, its string
 * copies and fills alone (rep movs, rep stos: page copies of a migration, page zeroing,
 * copies to and from user space), or none. */
enum slowtier_kernel { SLOWTIER_KERNEL_ALL, SLOWTIER_KERNEL_COPIES, SLOWTIER_KERNEL_NONE };

/* Which user-space instructions it hooks (user=): every one, or those of the code ranges guest
 * processes announced (channel.h's slowtier_hook_self; the default): the workload under test
 * and the chase pay the emulator's callback and the slow tier's charge, while pghotd and every
 * other process run as they do without the plugin. */
enum slowtier_user { SLOWTIER_USER_ANNOUNCED, SLOWTIER_USER_ALL };

/* The code ranges processes announced, at most SLOWTIER_MAX_HOOKS (later ones are refused and
 * counted): each vCPU's translations read them, and a vCPU running a process's announcement
 * appends one. */
#define SLOWTIER_MAX_HOOKS 256
struct slowtier_hooks {
	_Atomic size_t
	    n; /* ranges published: release-stored by an adder, acquire-loaded by readers */
	atomic_flag lock; /* serialises adders */
	_Atomic uint64_t refused;
	struct slowtier_range r[SLOWTIER_MAX_HOOKS];
};

struct slowtier_config {
	struct slowtier_range range[SLOWTIER_MAX_RANGES];
	size_t nranges;
	uint64_t cost_ps; /* extra cost per slow access at start (ns=, in picoseconds) */
	bool channel;	  /* the guest may change the cost (channel.h); channel=off refuses */
	bool check;	  /* check=on: print the configuration and refuse to install */
	enum slowtier_kernel kernel; /* kernel=all|copies|none, default none */
	enum slowtier_user user;     /* user=announced|all, default announced */
	bool help;
};

/* Parses the plugin's "name=value" arguments: slow=START-END (bytes, decimal or 0x hex, END
 * exclusive; repeatable), ns=NS (decimal, fractions allowed), channel=on|off, check=on|off,
 * kernel=all|copies|none, user=announced|all, help (alone or =on). Returns 0, or -EINVAL with a
 * message naming the argument in err (cfg then undefined). At least one slow range is required
 * unless help is asked for. */
int slowtier_config_parse(int argc, char **argv, struct slowtier_config *cfg, char *err,
			  size_t errlen);

/* Whether this plugin, written for API level `want`, can run under a QEMU offering levels
 * [min, cur]; when not, a message saying which QEMU to use goes to err. */
bool slowtier_api_ok(int want, int min, int cur, char *err, size_t errlen);

/* Whether the plugin hooks the instruction at vaddr whose n bytes are at insn: a user-space
 * instruction (vaddr below the x86-64 kernel half, 0xffff800000000000) as cfg->user says, with
 * hooks the ranges announced so far; the kernel's as cfg->kernel says. */
bool slowtier_insn_hooked(const struct slowtier_config *cfg, struct slowtier_hooks *hooks,
			  uint64_t vaddr, const uint8_t *insn, size_t n);

void slowtier_hooks_init(struct slowtier_hooks *h);
/* Any thread: adds [start, end); false (and counted in refused) when empty or full. */
bool slowtier_hooks_add(struct slowtier_hooks *h, uint64_t start, uint64_t end);
/* Any thread: whether vaddr is in a range added and published before. */
bool slowtier_hooks_has(struct slowtier_hooks *h, uint64_t vaddr);

/* Whether the n bytes at insn are an x86 string copy or fill with a repeat prefix (rep movs,
 * rep stos, any operand size, after any legacy prefixes and one REX). */
bool slowtier_is_rep_copy(const uint8_t *insn, size_t n);

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
