/* slowtier: a QEMU TCG plugin that makes the guest's memory-only node slow. Every guest memory
 * access whose address (qemu_plugin_hwaddr_phys_addr) falls in a slow range pays an extra
 * latency: the vCPU thread busy-waits that long on the host's monotonic clock before the
 * guest's next instruction. The guest's own clock follows the host's under TCG, so the guest
 * sees the access take that much longer. Every access pays, in user and kernel mode alike
 * (page copies of a migration, the kernel zeroing a page), loads and stores alike, as on a CXL
 * expander; a cache line touched by one of the vCPU's two most recent slow accesses is not
 * charged again (slowtier_logic.h). Latency only: bandwidth is not modelled.
 *
 * Arguments (-plugin slowtier.so,name=value,...): see slowtier_logic.h; tests/vm/lib/run
 * --slow-tier passes the ranges and ns=0, and the guest's chase (chase.c) sets the cost at boot
 * through the channel (channel.h). On exit it prints one line on stderr: the slow accesses seen,
 * those charged, the channel messages and the final cost.
 *
 * Threads: QEMU runs each vCPU on its own thread (MTTCG). The cost is one atomic word, written
 * by whichever vCPU runs the channel's load and read by all with relaxed order: it publishes
 * nothing else, so a vCPU that sees the old cost for a few more accesses is harmless. Each vCPU
 * has its own line filter and counters, in its own cache line, touched by its thread only
 * until exit. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "channel.h"
#include "qemu_plugin_api.h"
#include "slowtier_logic.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

struct vcpu {
	struct slowtier_lines lines;
	uint64_t hook_start; /* a hook-start message's address, until its hook-end (0: none) */
	uint64_t slow;	     /* slow accesses seen */
	uint64_t charged;    /* of them, charged the extra cost */
} __attribute__((aligned(64)));

static struct slowtier_config cfg;
static struct slowtier_hooks hooks;
static struct vcpu *vcpus;
static unsigned int nvcpus;
static _Atomic uint64_t cost_ps;
static _Atomic uint64_t messages;

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Busy-waits ps picoseconds (to the clock's resolution; the guest's calibration absorbs the
 * clock reads' own cost). */
static void spin(uint64_t ps)
{
	uint64_t t0 = now_ns();
	while ((now_ns() - t0) * 1000 < ps)
		cpu_relax();
}

static void on_access(unsigned int vcpu_index, qemu_plugin_meminfo_t info, uint64_t vaddr,
		      void *userdata)
{
	(void)userdata;
	/* The look-up runs whatever the cost, so a calibration at cost 0 pays it too. */
	struct qemu_plugin_hwaddr *hw = qemu_plugin_get_hwaddr(info, vaddr);
	if (hw == NULL || qemu_plugin_hwaddr_is_io(hw) || vcpu_index >= nvcpus)
		return;
	uint64_t addr = qemu_plugin_hwaddr_phys_addr(hw);
	if (!slowtier_is_slow(&cfg, addr))
		return;
	struct vcpu *v = &vcpus[vcpu_index];
	v->slow++;
	if (slowtier_lines_seen(&v->lines, addr))
		return;
	uint64_t ps = atomic_load_explicit(&cost_ps, memory_order_relaxed);
	if (ps == 0)
		return;
	v->charged++;
	spin(ps);
}

static void on_message(unsigned int vcpu_index, qemu_plugin_meminfo_t info, uint64_t vaddr,
		       void *userdata)
{
	(void)info;
	enum slowtier_message kind = (enum slowtier_message)(uintptr_t)userdata;
	if (kind == SLOWTIER_MSG_COST) {
		uint64_t ps = slowtier_channel_decode(vaddr);
		atomic_store_explicit(&cost_ps, ps, memory_order_relaxed);
		atomic_fetch_add_explicit(&messages, 1, memory_order_relaxed);
		fprintf(stderr,
			"slowtier: the guest set the extra cost to %.3f ns per slow access\n",
			(double)ps / 1000);
		return;
	}
	if (vcpu_index >= nvcpus)
		return;
	struct vcpu *v = &vcpus[vcpu_index];
	if (kind == SLOWTIER_MSG_HOOK_START) {
		v->hook_start = vaddr;
	} else if (v->hook_start != 0) {
		if (slowtier_hooks_add(&hooks, v->hook_start, vaddr + 8))
			fprintf(stderr, "slowtier: hooking user code 0x%llx-0x%llx\n",
				(unsigned long long)v->hook_start, (unsigned long long)vaddr + 8);
		v->hook_start = 0;
	}
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	(void)id;
	size_t n = qemu_plugin_tb_n_insns(tb);
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		/* The channel's loads are hooked for reads and writes alike: QEMU 7.2 never
		 * called a callback registered for reads alone (QEMU_PLUGIN_MEM_R; measured). */
		const uint8_t *data = qemu_plugin_insn_data(insn);
		size_t size = qemu_plugin_insn_size(insn);
		enum slowtier_message kind = slowtier_channel_message(data, size);
		if (kind == SLOWTIER_MSG_COST && !cfg.channel)
			kind = SLOWTIER_MSG_NONE;
		if (kind != SLOWTIER_MSG_NONE)
			qemu_plugin_register_vcpu_mem_cb(insn, on_message, QEMU_PLUGIN_CB_NO_REGS,
							 QEMU_PLUGIN_MEM_RW,
							 (void *)(uintptr_t)kind);
		else if (slowtier_insn_hooked(&cfg, &hooks, qemu_plugin_insn_vaddr(insn), data,
					      size))
			qemu_plugin_register_vcpu_mem_cb(insn, on_access, QEMU_PLUGIN_CB_NO_REGS,
							 QEMU_PLUGIN_MEM_RW, NULL);
	}
}

static void on_qemu_exit(qemu_plugin_id_t id, void *userdata)
{
	(void)id, (void)userdata;
	uint64_t slow = 0, charged = 0;
	for (unsigned int i = 0; i < nvcpus; i++)
		slow += vcpus[i].slow, charged += vcpus[i].charged;
	fprintf(stderr,
		"slowtier: slow_accesses=%llu charged=%llu messages=%llu cost_ns=%.3f "
		"hooked_ranges=%zu "
		"refused_ranges=%llu\n",
		(unsigned long long)slow, (unsigned long long)charged,
		(unsigned long long)atomic_load(&messages), (double)atomic_load(&cost_ps) / 1000,
		atomic_load(&hooks.n), (unsigned long long)atomic_load(&hooks.refused));
	free(vcpus);
}

static void print_config(void)
{
	static const char *const kernel[] = {"all", "copies", "none"};
	fprintf(stderr, "slowtier: cost_ns=%.3f channel=%s kernel=%s user=%s ranges:",
		(double)cfg.cost_ps / 1000, cfg.channel ? "on" : "off", kernel[cfg.kernel],
		cfg.user == SLOWTIER_USER_ALL ? "all" : "announced");
	for (size_t i = 0; i < cfg.nranges; i++)
		fprintf(stderr, " 0x%llx-0x%llx", (unsigned long long)cfg.range[i].start,
			(unsigned long long)cfg.range[i].end);
	fprintf(stderr, "\n");
}

static void print_help(void)
{
	fprintf(stderr,
		"slowtier: QEMU plugin charging guest accesses to slow ranges an extra latency\n"
		"  slow=START-END   a slow range of qemu_plugin_hwaddr_phys_addr addresses, END\n"
		"                   exclusive (repeatable; tests/vm/lib/run works them out)\n"
		"  ns=NS            extra nanoseconds per slow access at start (0)\n"
		"  channel=on|off   let the guest set the cost (tests/vm/lib/slowtier/channel.h)\n"
		"  check=on         print the configuration and stop QEMU before the guest starts\n"
		"  kernel=K         the guest kernel's instructions hooked: all, copies (rep movs\n"
		"                   and rep stos: page copies and zeroing) or none (the default)\n"
		"  user=U           user code hooked: announced (the ranges guest processes\n"
		"                   announce through the channel; the default) or all\n");
}

/* Refuses the install: QEMU then exits before the machine starts. */
static int refuse(const char *why)
{
	fprintf(stderr, "slowtier: %s\n", why);
	return -1;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
					   char **argv)
{
	char err[256];
	if (!slowtier_api_ok(QEMU_PLUGIN_VERSION, info->version.min, info->version.cur, err,
			     sizeof(err)))
		return refuse(err);
	if (slowtier_config_parse(argc, argv, &cfg, err, sizeof(err)) < 0)
		return refuse(err);
	if (cfg.help) {
		print_help();
		return refuse("help printed; not installed");
	}
	if (!info->system_emulation || strcmp(info->target_name, "x86_64") != 0)
		return refuse("needs qemu-system-x86_64 (system emulation of an x86_64 guest)");
	print_config();
	if (cfg.check)
		return refuse("check=on: configuration checked; not installed");
	nvcpus = (unsigned int)info->system.max_vcpus;
	vcpus = aligned_alloc(64, nvcpus * sizeof(*vcpus));
	if (vcpus == NULL)
		return refuse("out of memory");
	memset(vcpus, 0, nvcpus * sizeof(*vcpus));
	for (unsigned int i = 0; i < nvcpus; i++)
		slowtier_lines_init(&vcpus[i].lines);
	atomic_store(&cost_ps, cfg.cost_ps);
	slowtier_hooks_init(&hooks);
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, on_qemu_exit, NULL);
	return 0;
}
