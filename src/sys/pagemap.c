/* pagemap: decoding of pagemap entries and kpageflags words. */
#include "sys/pagemap.h"

enum kpf_class kpf_classify(uint64_t flags)
{
	/* A THP tail carries neither the LRU nor the idle flag of its own: page_idle reads
	 * it as accessed forever, so it must be recognised before the LRU test. */
	if (kpf_test(flags, KPF_THP) && kpf_test(flags, KPF_COMPOUND_TAIL))
		return KPF_CLASS_THP_TAIL;
	if (!kpf_test(flags, KPF_LRU))
		return KPF_CLASS_UNTRACKABLE;
	if (kpf_test(flags, KPF_THP) && kpf_test(flags, KPF_COMPOUND_HEAD))
		return KPF_CLASS_THP_HEAD;
	return KPF_CLASS_PAGE;
}
