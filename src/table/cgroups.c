/* cgroups: per-cgroup figures of the watched processes; see cgroups.h for the contract. */
#include "table/cgroups.h"

#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/stats.h"
#include "sys/procfs.h"
#include "sys/topology.h"
#include "table/cgroup_top.h"
#include "table/hot_table.h"
#include "table/proc_filter.h"
#include "table/procs.h"

/* Rounds' worth of walk_bytes an idle allowance banks: a process up to 64 times a round's
 * allowance is read once in 64 rounds; a larger one once the bank is full. */
#define BANK_ROUNDS 64
/* The most of a numa_maps line looked at: the fields after a file name of PATH_MAX. */
#define LINE_BUF 16384
/* Resident bytes are kept per process and node in 4 KiB units (16 TiB at most). */
#define UNIT_SHIFT 12

struct cg_proc {
	_Atomic uint64_t moved[CGROUPS__DIRS]; /* any thread adds; the main thread takes */
	uint64_t taken[CGROUPS__DIRS];	       /* this round's take, for taken_key */
	uint64_t taken_key;
	uint64_t key;	 /* its cgroup; 0: not known, or no v2 cgroup */
	uint64_t rss;	 /* resident bytes at its last read */
	uint32_t handle; /* the process described (procs handle); 0: none */
	pid_t pid;
	uint32_t hot;	/* this round: its hot pages waiting */
	uint32_t round; /* the round it was last read in */
	bool read;	/* read since it joined the registry */
	bool watched;	/* the selection took it at its last read */
	bool showable;	/* its cgroup's path is a label value */
};

struct cg_pair {
	uint64_t key;
	uint32_t slot;
};

struct cgroups {
	struct cgroups_deps d;
	unsigned nslots;
	struct cg_proc *proc;  /* [nslots] */
	uint32_t *pages;       /* [nslots * nr_nodes], UNIT_SHIFT units */
	struct cg_pair *pairs; /* [nslots] */
	struct cgroup_top *top;
	unsigned cursor; /* the slot the next round's reads in turn start at */
	uint64_t bank;	 /* resident bytes whose numa_maps may still be walked */
	uint32_t round;
	uint64_t node_bytes[STATS_MAX_NODES];
	char line[LINE_BUF];
};

/* The per-slot arrays: one slot per place in the process registry (32,768), of which a
 * server uses a few hundred. Mapped anonymous and private, they stay the kernel's zero page
 * until a slot is written, and the rounds write only slots that hold a process or a count:
 * 3.3 MiB of resident memory otherwise (scenario-scale's pghotd, 25.4 -> 28.8 MiB, when they
 * came from calloc and every round wrote every slot). */
static void *slots_alloc(size_t bytes)
{
	void *p = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void slots_free(void *p, size_t bytes)
{
	if (p)
		munmap(p, bytes ? bytes : 1);
}

static size_t pages_bytes(const struct cgroups *c)
{
	return (size_t)c->nslots * (size_t)(c->d.nr_nodes ? c->d.nr_nodes : 1) * sizeof(uint32_t);
}

int cgroups_new(const struct cgroups_deps *d, unsigned max_shown, struct cgroups **out)
{
	struct cgroups *c = calloc(1, sizeof(*c));
	int r;

	if (!c)
		return -ENOMEM;
	c->d = *d;
	if (c->d.nr_nodes < 0 || c->d.nr_nodes > STATS_MAX_NODES)
		c->d.nr_nodes = c->d.nr_nodes < 0 ? 0 : STATS_MAX_NODES;
	if (!c->d.reads_per_tick)
		c->d.reads_per_tick = CGROUPS_READS_PER_TICK;
	if (!c->d.walk_bytes)
		c->d.walk_bytes = CGROUPS_WALK_BYTES;
	c->nslots = procs_max(d->procs);
	c->proc = slots_alloc(c->nslots * sizeof(*c->proc));
	c->pages = slots_alloc(pages_bytes(c));
	c->pairs = slots_alloc(c->nslots * sizeof(*c->pairs));
	r = c->proc && c->pages && c->pairs ? cgroup_top_new(max_shown, c->d.nr_nodes, &c->top)
					    : -ENOMEM;
	if (r < 0) {
		cgroups_free(c);
		return r;
	}
	*out = c;
	return 0;
}

void cgroups_free(struct cgroups *c)
{
	if (!c)
		return;
	cgroup_top_free(c->top);
	slots_free(c->pairs, c->nslots * sizeof(*c->pairs));
	slots_free(c->pages, pages_bytes(c));
	slots_free(c->proc, c->nslots * sizeof(*c->proc));
	free(c);
}

int cgroups_resize(struct cgroups *c, unsigned max_shown)
{
	if (cgroup_top_max(c->top) == max_shown)
		return 0;
	return cgroup_top_resize(&c->top, max_shown);
}

void cgroups_moved(struct cgroups *c, uint32_t proc, enum cgroups_dir dir, uint64_t pages)
{
	unsigned slot = PROCS_SLOT(proc);

	if (!c || slot >= c->nslots || (unsigned)dir >= CGROUPS__DIRS)
		return;
	/* Relaxed: an independent counter; pairs with the exchange in take_counts(). */
	atomic_fetch_add_explicit(&c->proc[slot].moved[dir], pages, memory_order_relaxed);
}

/* ---- one round ---------------------------------------------------------------------- */

/* What was moved for each slot since the last round, to the cgroup its process was in. */
static void take_counts(struct cgroups *c)
{
	for (unsigned s = 0; s < c->nslots; s++) {
		struct cg_proc *p = &c->proc[s];

		for (int d = 0; d < CGROUPS__DIRS; d++) {
			/* Relaxed: pairs with the relaxed adds of cgroups_moved(). An empty slot
			 * is read, not written (slots_alloc). */
			uint64_t n = atomic_load_explicit(&p->moved[d], memory_order_relaxed);

			if (n)
				n = atomic_exchange_explicit(&p->moved[d], 0, memory_order_relaxed);
			if (p->taken[d] != n)
				p->taken[d] = n;
		}
		if (p->taken_key != p->key)
			p->taken_key = p->key;
	}
}

static uint32_t *pages_of(struct cgroups *c, unsigned slot)
{
	return c->pages + (size_t)slot * (size_t)c->d.nr_nodes;
}

/* Each slot describes the process the registry holds there now: a new one is not read yet. */
static void track_occupants(struct cgroups *c)
{
	for (unsigned s = 0; s < c->nslots; s++) {
		struct cg_proc *p = &c->proc[s];
		uint32_t h;
		pid_t pid;

		if (procs_at(c->d.procs, s, &h, &pid) < 0) {
			if (p->handle || p->watched) { /* an empty slot stays unwritten */
				p->handle = 0;
				p->watched = false;
			}
			continue;
		}
		if (p->handle == h)
			continue;
		p->handle = h;
		p->pid = pid;
		p->key = 0;
		p->rss = 0;
		p->read = p->watched = false;
		memset(pages_of(c, s), 0, (size_t)c->d.nr_nodes * sizeof(uint32_t));
	}
}

static uint64_t cgroup_key(const struct cgroups *c, const char *path, size_t len)
{
	uint64_t k = siphash24(c->d.seed, path, len);

	return k ? k : 1; /* 0 means "not known" */
}

/* The bank's top: what BANK_ROUNDS unused rounds leave. */
static uint64_t bank_cap(const struct cgroups *c)
{
	return c->d.walk_bytes > UINT64_MAX / BANK_ROUNDS ? UINT64_MAX
							  : c->d.walk_bytes * BANK_ROUNDS;
}

/* Whether the bank pays for walking a resident set of rss bytes (a full bank pays for any). */
static bool bank_pays(const struct cgroups *c, uint64_t rss)
{
	return rss <= c->bank || c->bank >= bank_cap(c);
}

/* A process's cgroup or numa_maps could not be read (the process was there). */
static void count_failure(struct cgroups *c)
{
	if (c->d.stats)
		stats_add(c->d.stats, ST_CGROUP_READ_FAILURES, 1);
}

/* Reads slot s's numa_maps into its pages, paid from the bank. */
static void walk_numa(struct cgroups *c, unsigned s)
{
	uint32_t *pages = pages_of(c, s);
	int r;

	c->bank -= c->proc[s].rss < c->bank ? c->proc[s].rss : c->bank;
	r = procfs_read_numa_bytes(c->d.procfs_root, c->proc[s].pid, c->line, sizeof(c->line),
				   UINT64_C(1) << UNIT_SHIFT, c->node_bytes, c->d.nr_nodes);
	if (r < 0 && r != -ESRCH)
		count_failure(c);
	if (r < 0)
		return;
	for (int n = 0; n < c->d.nr_nodes; n++) {
		uint64_t u = c->node_bytes[n] >> UNIT_SHIFT;

		pages[n] = u > UINT32_MAX ? UINT32_MAX : (uint32_t)u;
	}
}

/* Reads what slot s's process is: its cgroup, whether the selection takes it, its resident set
 * and, when the bank pays for it, its bytes on each node. A file that cannot be read leaves
 * the process unknown, as to the feeder: not watched, its counts in (other). */
static void read_one(struct cgroups *c, const struct pghotd_config *cfg, unsigned s)
{
	struct cg_proc *p = &c->proc[s];
	struct proc_info info;
	int r = proc_info_read(c->d.procfs_root, p->pid, &info);
	size_t len;

	p->read = true;
	p->round = c->round;
	if (r < 0) {
		if (r != -ESRCH)
			count_failure(c);
		p->key = 0;
		p->watched = false;
		return;
	}
	p->watched =
	    !info.kernel_thread && (proc_filter_selects_all(cfg) || proc_filter_match(cfg, &info));
	len = strlen(info.cgroup);
	p->key = len ? cgroup_key(c, info.cgroup, len) : 0;
	/* A path Prometheus would refuse as a label value is never shown: (other). */
	p->showable = stats_label_valid(info.cgroup, len);
	p->rss = info.rss_bytes;
	if (p->watched && bank_pays(c, p->rss))
		walk_numa(c, s);
}

/* Processes new to the registry first, then the others in turn from the cursor, within the
 * round's reads; the turn stops at a process whose resident set the bank cannot pay for yet,
 * so it is the first read when it can. */
static void read_processes(struct cgroups *c, const struct pghotd_config *cfg)
{
	unsigned left = c->d.reads_per_tick, i;

	c->round++;
	c->bank = c->bank > bank_cap(c) - c->d.walk_bytes ? bank_cap(c) : c->bank + c->d.walk_bytes;
	for (unsigned s = 0; s < c->nslots && left; s++)
		if (c->proc[s].handle && !c->proc[s].read) {
			read_one(c, cfg, s);
			left--;
		}
	for (i = 0; i < c->nslots && left; i++) {
		unsigned s = (c->cursor + i) % c->nslots;
		struct cg_proc *p = &c->proc[s];

		if (!p->handle || p->round == c->round)
			continue;
		if (p->watched && !bank_pays(c, p->rss))
			break;
		read_one(c, cfg, s);
		left--;
	}
	c->cursor = (c->cursor + i) % (c->nslots ? c->nslots : 1);
}

static void count_one_hot(void *ctx, uint32_t proc)
{
	struct cgroups *c = ctx;
	unsigned s = PROCS_SLOT(proc);

	if (s < c->nslots && c->proc[s].handle == proc && c->proc[s].hot < UINT32_MAX)
		c->proc[s].hot++;
}

static void count_hot(struct cgroups *c)
{
	for (unsigned s = 0; s < c->nslots; s++)
		if (c->proc[s].hot) /* an empty slot stays unwritten */
			c->proc[s].hot = 0;
	if (c->d.hot)
		hot_table_each_waiting(c->d.hot, count_one_hot, c);
}

static int by_key(const void *a, const void *b)
{
	const struct cg_pair *x = a, *y = b;

	return (x->key > y->key) - (x->key < y->key);
}

/* The watched processes with a known cgroup, grouped by it; their number. */
static size_t group_watched(struct cgroups *c)
{
	size_t n = 0;

	for (unsigned s = 0; s < c->nslots; s++)
		if (c->proc[s].handle && c->proc[s].watched && c->proc[s].key)
			c->pairs[n++] = (struct cg_pair){c->proc[s].key, s};
	qsort(c->pairs, n, sizeof(*c->pairs), by_key);
	return n;
}

/* End of the run of pairs[i]'s cgroup. */
static size_t run_end(const struct cgroups *c, size_t i, size_t n)
{
	size_t e = i;

	while (e < n && c->pairs[e].key == c->pairs[i].key)
		e++;
	return e;
}

static uint64_t slow_bytes(struct cgroups *c, const struct pghotd_config *cfg, size_t i, size_t e)
{
	uint64_t sum = 0;

	for (; i < e; i++)
		for (int n = 0; n < c->d.nr_nodes; n++)
			if (cfg->topo && topology_node_is_slow(cfg->topo, n))
				sum += (uint64_t)pages_of(c, c->pairs[i].slot)[n] << UNIT_SHIFT;
	return sum;
}

/* cgroup_top_path_fn: the path of rep's cgroup, read again, if it still hashes to key. */
static int path_of(void *ctx, uint32_t rep, uint64_t key, char *buf, size_t size)
{
	struct cgroups *c = ctx;
	struct cg_proc *p = &c->proc[PROCS_SLOT(rep)];
	int len;

	if (p->handle != rep)
		return -ESTALE;
	len = procfs_read_cgroup(c->d.procfs_root, p->pid, buf, size);
	if (len >= 0 && cgroup_key(c, buf, (size_t)len) != key)
		return -ESTALE; /* it moved to another cgroup since its read */
	return len;
}

static void add_gauges(struct cgroups *c, size_t i, size_t e)
{
	struct cgroup_series *g = cgroup_top_gauges(c->top, c->pairs[i].key);

	for (; i < e; i++) {
		const uint32_t *pages = pages_of(c, c->pairs[i].slot);

		for (int n = 0; n < c->d.nr_nodes; n++)
			g->bytes[n] += (uint64_t)pages[n] << UNIT_SHIFT;
		g->hot += c->proc[c->pairs[i].slot].hot;
	}
}

static void sum_by_cgroup(struct cgroups *c, const struct pghotd_config *cfg)
{
	size_t n = group_watched(c), i, e;

	cgroup_top_begin(c->top);
	for (i = 0; i < n; i = e) {
		e = run_end(c, i, n);
		cgroup_top_offer(c->top, c->pairs[i].key, slow_bytes(c, cfg, i, e),
				 c->proc[c->pairs[i].slot].handle,
				 c->proc[c->pairs[i].slot].showable);
	}
	cgroup_top_settle(c->top, path_of, c);
	for (i = 0; i < n; i = e) {
		e = run_end(c, i, n);
		add_gauges(c, i, e);
	}
}

static void add_counts(struct cgroups *c)
{
	for (unsigned s = 0; s < c->nslots; s++) {
		struct cg_proc *p = &c->proc[s];
		struct cgroup_series *t;

		if (!p->taken[CGROUPS_PROMOTED] && !p->taken[CGROUPS_DEMOTED])
			continue;
		t = cgroup_top_counters(c->top, p->taken_key);
		t->promoted += p->taken[CGROUPS_PROMOTED];
		t->demoted += p->taken[CGROUPS_DEMOTED];
	}
}

void cgroups_refresh(struct cgroups *c, const struct pghotd_config *cfg)
{
	take_counts(c);
	if (cgroup_top_max(c->top) == 0)
		return; /* the families are off: what was moved meanwhile is in no series */
	track_occupants(c);
	read_processes(c, cfg);
	count_hot(c);
	sum_by_cgroup(c, cfg);
	add_counts(c);
}

/* ---- rendering ---------------------------------------------------------------------- */

static void sample(FILE *f, const char *name, const struct cgroup_series *s, int node, uint64_t v)
{
	fprintf(f, "%s{cgroup=\"", name);
	stats_label_value(f, s->label, s->len);
	if (node >= 0)
		fprintf(f, "\",node=\"%d\"} %" PRIu64 "\n", node, v);
	else
		fprintf(f, "\"} %" PRIu64 "\n", v);
}

enum column { COL_PROMOTED, COL_DEMOTED, COL_BYTES, COL_HOT };

static const struct {
	const char *name, *type, *help;
} families[] = {
    [COL_PROMOTED] = {"pghotd_cgroup_promoted_pages_total", "counter",
		      "Pages moved to a fast node for the cgroup's watched processes since its "
		      "series was shown; cgroup=\"(other)\" counts the folded cgroups'."},
    [COL_DEMOTED] =
	{"pghotd_cgroup_demoted_pages_total", "counter",
	 "Pages moved to a slow node for the cgroup's watched processes since its series "
	 "was shown; cgroup=\"(other)\" counts the folded cgroups'."},
    [COL_BYTES] = {"pghotd_cgroup_memory_bytes", "gauge",
		   "Bytes the cgroup's watched processes have resident on each node (numa_maps)."},
    [COL_HOT] = {"pghotd_cgroup_hot_pages", "gauge",
		 "Hot pages of the cgroup's watched processes waiting for the promoter."},
};

static void render_series(FILE *f, enum column col, const struct cgroup_series *s, int nr_nodes)
{
	const char *name = families[col].name;

	if (col == COL_BYTES)
		for (int n = 0; n < nr_nodes; n++)
			sample(f, name, s, n, s->bytes[n]);
	else
		sample(f, name, s, -1,
		       col == COL_PROMOTED  ? s->promoted
		       : col == COL_DEMOTED ? s->demoted
					    : s->hot);
}

int cgroups_render(void *ctx, FILE *f)
{
	struct cgroups *c = ctx;
	unsigned shown, folded, max = cgroup_top_max(c->top);

	if (max == 0)
		return 0;
	cgroup_top_sizes(c->top, &shown, &folded);
	fprintf(f,
		"# HELP pghotd_cgroups Cgroups of watched processes with series of their own "
		"(shown) and summed under cgroup=\"(other)\" (folded).\n"
		"# TYPE pghotd_cgroups gauge\n"
		"pghotd_cgroups{state=\"shown\"} %u\npghotd_cgroups{state=\"folded\"} %u\n",
		shown, folded);
	for (int col = 0; col <= COL_HOT; col++) {
		fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", families[col].name, families[col].help,
			families[col].name, families[col].type);
		for (unsigned i = 0; i < max; i++)
			if (cgroup_top_at(c->top, i))
				render_series(f, col, cgroup_top_at(c->top, i), c->d.nr_nodes);
		render_series(f, col, cgroup_top_other(c->top), c->d.nr_nodes);
	}
	return ferror(f) ? -EIO : 0;
}
