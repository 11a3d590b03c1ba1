/* channel: how a guest program tells the slow tier's plugin the extra cost per slow access, so
 * the guest can calibrate it at boot (chase.c) without a second boot or a host-side control.
 *
 * The message is one load, `mov rax, [rdi + SLOWTIER_CHANNEL_DISP]`, encoded exactly as
 * SLOWTIER_CHANNEL_INSN followed by the displacement's 4 bytes (little endian). The plugin
 * recognises those 7 bytes when it translates the instruction (a 32-bit displacement no
 * compiler emits for a real structure) and hooks that one instruction: the load's virtual
 * address (rdi plus the displacement) modulo 2^SLOWTIER_CHANNEL_BITS is the new cost in
 * picoseconds (0 turns the charge off). The guest points rdi into a readable region aligned to
 * 2^SLOWTIER_CHANNEL_BITS bytes, so the load itself reads memory the guest owns (an untouched
 * anonymous mapping reads the zero page); without the plugin the message is a harmless read.
 * Any guest process can send it: the testbed trusts its guest.
 *
 * Two more messages, the same load with their own displacements, let a process ask that its
 * own code be hooked (the plugin's user=announced, its default, hooks no other user-space
 * code): SLOWTIER_HOOK_START_DISP's address is the first byte of a code range, and the same
 * vCPU's next SLOWTIER_HOOK_END_DISP's address is its last 8 bytes. slowtier_hook_self() sends
 * both for the caller's executable, back to back (a process moved to another vCPU between the
 * two loads loses its announcement: a preemption between two adjacent instructions). Without
 * the plugin both are harmless reads of the process's own code. */
#ifndef PGHOTD_SLOWTIER_CHANNEL_H
#define PGHOTD_SLOWTIER_CHANNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define SLOWTIER_CHANNEL_DISP	 0x51a7c0deu
#define SLOWTIER_HOOK_START_DISP 0x51a7c1deu
#define SLOWTIER_HOOK_END_DISP	 0x51a7c2deu
#define SLOWTIER_CHANNEL_BITS	 24
/* The most a message carries: 16.7 us. */
#define SLOWTIER_CHANNEL_MAX_PS ((UINT64_C(1) << SLOWTIER_CHANNEL_BITS) - 1)
/* REX.W, MOV r64 <- r/m64, ModRM mod=10 (disp32) reg=rax rm=rdi. */
#define SLOWTIER_CHANNEL_INSN	  "\x48\x8b\x87"
#define SLOWTIER_CHANNEL_INSN_LEN 7

enum slowtier_message {
	SLOWTIER_MSG_NONE,
	SLOWTIER_MSG_COST,
	SLOWTIER_MSG_HOOK_START,
	SLOWTIER_MSG_HOOK_END
};

/* Which message, if any, the n instruction bytes at insn send. */
static inline enum slowtier_message slowtier_channel_message(const uint8_t *insn, size_t n)
{
	if (n != SLOWTIER_CHANNEL_INSN_LEN || memcmp(insn, SLOWTIER_CHANNEL_INSN, 3) != 0)
		return SLOWTIER_MSG_NONE;
	uint32_t disp = (uint32_t)insn[3] | (uint32_t)insn[4] << 8 | (uint32_t)insn[5] << 16 |
			(uint32_t)insn[6] << 24;
	switch (disp) {
	case SLOWTIER_CHANNEL_DISP:
		return SLOWTIER_MSG_COST;
	case SLOWTIER_HOOK_START_DISP:
		return SLOWTIER_MSG_HOOK_START;
	case SLOWTIER_HOOK_END_DISP:
		return SLOWTIER_MSG_HOOK_END;
	default:
		return SLOWTIER_MSG_NONE;
	}
}

/* Whether the n instruction bytes at insn are the cost message's load. */
static inline bool slowtier_channel_is_insn(const uint8_t *insn, size_t n)
{
	return slowtier_channel_message(insn, n) == SLOWTIER_MSG_COST;
}

/* The cost in picoseconds a channel load at vaddr (its effective address) carries. */
static inline uint64_t slowtier_channel_decode(uint64_t vaddr)
{
	return vaddr & SLOWTIER_CHANNEL_MAX_PS;
}

/* The rdi a guest loads to send ps (at most SLOWTIER_CHANNEL_MAX_PS) from region, an address
 * aligned to 2^SLOWTIER_CHANNEL_BITS with that many bytes plus 8 readable after it. */
static inline uint64_t slowtier_channel_encode(uint64_t region, uint64_t ps)
{
	return region + ps - SLOWTIER_CHANNEL_DISP;
}

#if defined(__x86_64__)
/* Asks the plugin to hook the calling process's executable code (the GNU linker's
 * __executable_start to etext): two loads of that code, harmless without the plugin. */
static inline void slowtier_hook_self(void)
{
	extern const char __executable_start[], etext[];
	uint64_t out;
	uint64_t start = (uint64_t)(uintptr_t)__executable_start;
	uint64_t last = ((uint64_t)(uintptr_t)etext - 8) & ~(uint64_t)7;
	__asm__ volatile(
	    ".byte 0x48, 0x8b, 0x87\n\t.long %c[disp]"
	    : "=a"(out)
	    : "D"(start - SLOWTIER_HOOK_START_DISP), [disp] "i"(SLOWTIER_HOOK_START_DISP)
	    : "memory");
	__asm__ volatile(".byte 0x48, 0x8b, 0x87\n\t.long %c[disp]"
			 : "=a"(out)
			 : "D"(last - SLOWTIER_HOOK_END_DISP), [disp] "i"(SLOWTIER_HOOK_END_DISP)
			 : "memory");
	(void)out;
}
#endif

#endif
