/* replay: perf.data -> parser -> pmu_filter -> hot_table -> candidate lines. See replay.h
 * for the rules. Besides the hot table the replay keeps two small tables of its own: recorded
 * pid -> synthetic procs handle, and (handle, page) -> samples, for the samples=<n> column. */
#include "daemon/replay.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/config.h"
#include "table/hot_table.h"
#include "base/log.h"
#include "sources/perf/perf_data.h"
#include "sources/pmu/pmu_filter.h"
#include "sources/pmu/ibs_source.h"
#include "sources/pmu/pebs_source.h"

#define PID_SLOTS   65536u /* a procs handle's slot field is 16 bits */
#define HANDLE_GEN1 (1u << 16)
#define QUEUE_SLOTS 1024u
#define VPN_BITS    (HOT_VADDR_BITS - HOT_PAGE_SHIFT)

struct page_count {
	uint64_t key; /* handle << VPN_BITS | vpn; 0 = empty (handles are never 0) */
	uint64_t n;
};

struct candidate {
	pid_t pid;
	uint64_t page;
	uint64_t key;
};

struct replay {
	struct hot_table *hot;
	struct hot_params params;
	struct ibs_convert ibs;	  /* ibs_op events: RAW registers, else what the kernel decoded */
	struct pebs_convert pebs; /* everything else: ADDR and DATA_SRC as the kernel wrote them */
	pid_t pids[PID_SLOTS];	  /* slot -> recorded pid, 0 = free */
	struct page_count *pages;
	size_t pages_cap, pages_used;
	struct candidate *cands;
	size_t ncands, cands_cap;
	uint64_t now_ms;
	int err; /* first allocation failure */
};

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= UINT64_C(0xff51afd7ed558ccd);
	x ^= x >> 33;
	return x;
}

/* Synthetic handle of a recorded pid (generation 1, slot from a probe); 0 when all slots are
 * taken. */
static uint32_t pid_handle(struct replay *r, pid_t pid)
{
	uint32_t slot = (uint32_t)mix64((uint64_t)pid) & (PID_SLOTS - 1);

	for (uint32_t i = 0; i < PID_SLOTS; i++, slot = (slot + 1) & (PID_SLOTS - 1)) {
		if (r->pids[slot] == pid)
			return HANDLE_GEN1 | slot;
		if (r->pids[slot] == 0) {
			r->pids[slot] = pid;
			return HANDLE_GEN1 | slot;
		}
	}
	return 0;
}

static struct page_count *page_slot(struct page_count *tab, size_t cap, uint64_t key)
{
	size_t i = mix64(key) & (cap - 1);

	while (tab[i].key != 0 && tab[i].key != key)
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

static int pages_grow(struct replay *r)
{
	size_t cap = r->pages_cap ? 2 * r->pages_cap : 4096;
	struct page_count *tab = calloc(cap, sizeof(*tab));

	if (!tab)
		return -ENOMEM;
	for (size_t i = 0; i < r->pages_cap; i++)
		if (r->pages[i].key)
			*page_slot(tab, cap, r->pages[i].key) = r->pages[i];
	free(r->pages);
	r->pages = tab;
	r->pages_cap = cap;
	return 0;
}

static int page_count_add(struct replay *r, uint64_t key)
{
	struct page_count *pc;

	if (2 * (r->pages_used + 1) > r->pages_cap && pages_grow(r) < 0)
		return -ENOMEM;
	pc = page_slot(r->pages, r->pages_cap, key);
	if (pc->key == 0) {
		pc->key = key;
		r->pages_used++;
	}
	pc->n++;
	return 0;
}

static uint64_t page_count_get(const struct replay *r, uint64_t key)
{
	return r->pages_cap ? page_slot(r->pages, r->pages_cap, key)->n : 0;
}

static int cand_push(struct replay *r, const struct hot_candidate *c)
{
	uint32_t slot = c->proc & (PID_SLOTS - 1);

	if (r->ncands == r->cands_cap) {
		size_t cap = r->cands_cap ? 2 * r->cands_cap : 256;
		struct candidate *n = realloc(r->cands, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		r->cands = n;
		r->cands_cap = cap;
	}
	r->cands[r->ncands++] = (struct candidate){
	    .pid = r->pids[slot],
	    .page = c->vaddr,
	    .key = (uint64_t)c->proc << VPN_BITS | c->vaddr >> HOT_PAGE_SHIFT,
	};
	return 0;
}

/* Plays the promoter: each hot page is a candidate, settled as promoted so that the
 * cooldown keeps it from being queued again, as it would live. */
static void drain_ready(struct replay *r)
{
	struct hot_candidate c[64];
	size_t n;

	while ((n = hot_table_pop(r->hot, c, 64)) > 0)
		for (size_t i = 0; i < n; i++) {
			if (cand_push(r, &c[i]) < 0 && !r->err)
				r->err = -ENOMEM;
			hot_table_done(r->hot, &c[i], HOT_PROMOTED, r->now_ms);
		}
}

static void replay_access(struct replay *r, const struct access_event *ev)
{
	uint32_t h;
	struct hot_access a;

	if (ev->pid <= 0 || ev->vaddr >> HOT_VADDR_BITS)
		return;
	h = pid_handle(r, ev->pid);
	if (h == 0)
		return;
	if (ev->time_ns / 1000000 > r->now_ms)
		r->now_ms = ev->time_ns / 1000000;
	if (page_count_add(r, (uint64_t)h << VPN_BITS | ev->vaddr >> HOT_PAGE_SHIFT) < 0 && !r->err)
		r->err = -ENOMEM;
	a = (struct hot_access){.proc = h, .vaddr = ev->vaddr, .now_ms = r->now_ms, .node = -1};
	if (hot_table_record(r->hot, &a, &r->params) != 0)
		drain_ready(r); /* queued, or the queue was full */
}

static bool attr_is_ibs_op(const struct perf_data_attr *a)
{
	return strcmp(a->pmu, "ibs_op") == 0 || strncmp(a->name, "ibs_op/", 7) == 0;
}

/* The live sources' conversions: an IBS sample with RAW has its registers decoded (as on
 * kernels before 6.1), one without takes ADDR and DATA_SRC with no kind assumed; any other
 * event's samples count as loads unless their DATA_SRC says otherwise (page-fault
 * recordings carry no op). */
static void on_sample(void *ctx, const struct perf_data_attr *attr,
		      const struct perf_event_header *h, const struct perf_sample *s)
{
	struct replay *r = ctx;
	struct access_event ev;
	enum sample_drop why;

	(void)h;
	if (attr_is_ibs_op(attr)) {
		r->ibs.use_raw = s->present & PERF_SAMPLE_RAW;
		why = ibs_source_convert(&r->ibs, s, &ev);
	} else {
		why = pebs_source_convert(&r->pebs, ACCESS_LOAD, s, &ev);
	}
	if (why == SAMPLE_KEPT)
		replay_access(r, &ev);
}

int replay_target_node(const struct pghotd_config *cfg)
{
	if (cfg->promotion.target_nodes.n > 0)
		return cfg->promotion.target_nodes.node[0];
	if (cfg->tiers.fast_nodes.n > 0)
		return cfg->tiers.fast_nodes.node[0];
	return 0;
}

static void print_result(const struct replay *r, const struct perf_data_counts *c, int target,
			 FILE *out)
{
	for (size_t i = 0; i < r->ncands; i++)
		fprintf(out, "promote pid=%d addr=0x%" PRIx64 " samples=%" PRIu64 " target=%d\n",
			(int)r->cands[i].pid, r->cands[i].page, page_count_get(r, r->cands[i].key),
			target);
	fprintf(out,
		"replay: records=%" PRIu64 " samples=%" PRIu64 " lost=%" PRIu64 " candidates=%zu\n",
		c->records, c->samples, c->lost, r->ncands);
}

/* Converters without a topology: placement comes from the data source alone (see replay.h),
 * and the CPU of the recording (HEADER_CPUID) selects the IBS errata. */
static void replay_converters_init(struct replay *r, const struct perf_data *d)
{
	struct perf_data_cpu cpu;
	struct ibs_pmu pmu = {0};
	struct ibs_opts io = {.phys_addr = true};
	struct pebs_opts po = {.phys_addr = true};

	if (perf_data_cpuid_parse(perf_data_env(d)->cpuid, &cpu) == 0 &&
	    strcmp(cpu.vendor, "AuthenticAMD") == 0)
		pmu.cpu = (struct ibs_cpu){.family = cpu.family, .model = cpu.model};
	ibs_source_convert_init(&r->ibs, &pmu, &io, NULL, NULL);
	pebs_source_convert_init(&r->pebs, &po, NULL, NULL);
}

static struct replay *replay_new(const struct pghotd_config *cfg, const struct perf_data *d)
{
	struct replay *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	if (hot_table_new(cfg->hot_table.capacity, QUEUE_SLOTS, &r->hot) < 0) {
		free(r);
		return NULL;
	}
	r->params = (struct hot_params){.threshold = cfg->promotion.threshold,
					.window_ms = cfg->promotion.window_ms,
					.cooldown_ms = cfg->promotion.cooldown_ms};
	replay_converters_init(r, d);
	return r;
}

static void replay_free(struct replay *r)
{
	if (!r)
		return;
	hot_table_free(r->hot);
	free(r->pages);
	free(r->cands);
	free(r);
}

int replay_run(const char *path, const struct pghotd_config *cfg, FILE *out)
{
	char err[PERF_DATA_ERR_LEN] = "";
	struct perf_data_counts counts = {0};
	struct perf_data *d = NULL;
	struct replay *r = NULL;
	struct perf_data_ops ops = {.on_sample = on_sample};
	int ret;

	ret = perf_data_open(path, &d, err, sizeof(err));
	if (ret < 0) {
		log_error("replay: %s: %s", path, err);
		return ret;
	}
	r = replay_new(cfg, d);
	if (!r) {
		ret = log_error_errno(-ENOMEM, "replay: cannot allocate the hot table");
		goto out;
	}
	ops.ctx = r;
	ret = perf_data_read(d, &ops, &counts, err, sizeof(err));
	if (ret < 0) {
		log_error("replay: %s: %s", path, err);
		goto out;
	}
	if (r->err) {
		ret = log_error_errno(r->err, "replay: out of memory");
		goto out;
	}
	print_result(r, &counts, replay_target_node(cfg), out);
	ret = fflush(out) == 0 ? 0 : -EIO;
out:
	replay_free(r);
	perf_data_close(d);
	return ret;
}
