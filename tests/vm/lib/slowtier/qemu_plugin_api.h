/* qemu_plugin_api: the part of QEMU's TCG plugin interface the slow tier uses, declared here
 * because Debian ships no qemu-plugin.h. Written from QEMU 7.2's plugin documentation
 * (docs/devel/tcg-plugins.rst and the API reference generated from include/qemu/qemu-plugin.h),
 * API version 1: QEMU resolves these functions in its own binary when it loads the plugin, and
 * the plugin exports qemu_plugin_version and qemu_plugin_install.
 *
 * Facts this relies on (API version 1, as QEMU 7.2 offers it):
 * - the plugin names the API level it was written for in an exported int, qemu_plugin_version;
 *   QEMU refuses a plugin whose level lies outside [min, cur], and passes both to install;
 * - qemu_plugin_install(id, info, argc, argv) runs once at load, before any vCPU runs; argv
 *   holds the "name=value" pairs after the path in -plugin PATH,name=value,...; a non-zero
 *   return makes QEMU exit with an error before the machine starts;
 * - a translation callback sees each translation block once as it is translated and can attach
 *   a memory callback to any of its instructions; that callback then runs on the vCPU's thread
 *   after each access the instruction makes, with the access's virtual address;
 * - qemu_plugin_get_hwaddr() is valid only inside that memory callback; for RAM,
 *   qemu_plugin_hwaddr_phys_addr() in QEMU before 8.2 returns the RAM block's ram_addr offset
 *   plus the offset within it plus the block's address inside its parent region, which for the
 *   NUMA memory backends is not the guest-physical address (tests/vm/README.md, "The slow
 *   tier"); from 8.2 on it is the guest-physical address. */
#ifndef PGHOTD_QEMU_PLUGIN_API_H
#define PGHOTD_QEMU_PLUGIN_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define QEMU_PLUGIN_EXPORT __attribute__((visibility("default")))

/* The API level these declarations describe. */
#define QEMU_PLUGIN_VERSION 1

typedef uint64_t qemu_plugin_id_t;
/* An access's size, sign, endianness and direction, queried through the functions below. */
typedef uint32_t qemu_plugin_meminfo_t;

/* What QEMU tells the plugin at install; valid only during qemu_plugin_install. */
typedef struct qemu_info_t {
	const char *target_name; /* "x86_64" for qemu-system-x86_64 */
	struct {
		int min; /* oldest API level QEMU still loads */
		int cur; /* newest API level QEMU offers */
	} version;
	bool system_emulation;
	union {
		struct {
			int smp_vcpus;
			int max_vcpus;
		} system;
	};
} qemu_info_t;

struct qemu_plugin_tb;
struct qemu_plugin_insn;
struct qemu_plugin_hwaddr;

enum qemu_plugin_cb_flags {
	QEMU_PLUGIN_CB_NO_REGS,
	QEMU_PLUGIN_CB_R_REGS,
	QEMU_PLUGIN_CB_RW_REGS,
};

enum qemu_plugin_mem_rw {
	QEMU_PLUGIN_MEM_R = 1,
	QEMU_PLUGIN_MEM_W,
	QEMU_PLUGIN_MEM_RW,
};

typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_vcpu_mem_cb_t)(unsigned int vcpu_index, qemu_plugin_meminfo_t info,
					  uint64_t vaddr, void *userdata);

QEMU_PLUGIN_EXPORT extern int qemu_plugin_version;
QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
					   char **argv);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn, qemu_plugin_vcpu_mem_cb_t cb,
				      enum qemu_plugin_cb_flags flags, enum qemu_plugin_mem_rw rw,
				      void *userdata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);

size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
/* The instruction's bytes; valid during the translation callback only. */
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
/* The instruction's guest virtual address. */
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);

struct qemu_plugin_hwaddr *qemu_plugin_get_hwaddr(qemu_plugin_meminfo_t info, uint64_t vaddr);
bool qemu_plugin_hwaddr_is_io(const struct qemu_plugin_hwaddr *haddr);
uint64_t qemu_plugin_hwaddr_phys_addr(const struct qemu_plugin_hwaddr *haddr);

#endif
