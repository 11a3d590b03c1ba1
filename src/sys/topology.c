/* topology: reads the NUMA layout from a sysfs tree (see topology.h for the contract).
 *
 * Loading goes node list -> per node (cpulist, meminfo) -> distances -> memory tiers -> tier
 * detection -> memory block map -> nearest fast node per CPU. The parsers (lists, meminfo,
 * distances, block size) are pure functions over text; only file_read_small() touches files. */
#include "base/fileio.h"
#include "sys/topology.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "sys/zoneinfo.h"

#define NODE_DIR   "devices/system/node"
#define TIER_DIR   "devices/virtual/memory_tiering"
#define MEMORY_DIR "devices/system/memory"

/* A sysfs attribute shows at most one page, so one page plus the NUL holds any of them. */
#define SYSFS_BUF 4097
/* Sanity caps against a corrupt tree making us allocate without bound: Linux's NR_CPUS
 * tops out at 8192, and 4 Mi memory blocks of 128 MiB are 512 TiB. */
#define TOPO_MAX_CPUS	 65536
#define TOPO_MAX_BLOCKS	 (1u << 22)
#define FRAME_SIZE	 4096u
#define DIST_UNREACHABLE 255

static int topo_path(char *buf, size_t size, const char *root, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int topo_path(char *buf, size_t size, const char *root, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(buf, size, "%s/", root);
	int m;

	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	va_start(ap, fmt);
	m = vsnprintf(buf + n, size - (size_t)n, fmt, ap);
	va_end(ap);
	if (m < 0 || (size_t)m >= size - (size_t)n)
		return -ENAMETOOLONG;
	return 0;
}

static int topo_parse_uint(const char **p, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!isdigit((unsigned char)**p))
		return -EINVAL;
	errno = 0;
	v = strtoul(*p, &end, 10);
	if (errno != 0 || v > max)
		return -EINVAL;
	*p = end;
	*out = v;
	return 0;
}

static const char *topo_skip_space(const char *p)
{
	while (isspace((unsigned char)*p))
		p++;
	return p;
}

typedef int (*topo_list_fn)(void *ctx, int id);

/* Parses a kernel list ("0-3,8,10-11\n"; empty means none), calling add for each id. -EINVAL
 * on bad syntax, a reversed range or an id above max. */
static int topo_parse_list(const char *s, unsigned long max, topo_list_fn add, void *ctx)
{
	const char *p = topo_skip_space(s);
	int r;

	while (*p != '\0') {
		unsigned long lo, hi;

		r = topo_parse_uint(&p, max, &lo);
		if (r < 0)
			return r;
		hi = lo;
		if (*p == '-') {
			p++;
			r = topo_parse_uint(&p, max, &hi);
			if (r < 0 || hi < lo)
				return -EINVAL;
		}
		for (unsigned long v = lo; v <= hi; v++) {
			r = add(ctx, (int)v);
			if (r < 0)
				return r;
		}
		if (*p != ',')
			break;
		p++;
	}
	return *topo_skip_space(p) == '\0' ? 0 : -EINVAL;
}

/* Parses one "Node N Key:   value kB" line; -EINVAL if it is not of that shape. */
static int topo_parse_meminfo_line(const char *line, int *node, char *key, size_t key_size,
				   uint64_t *kb)
{
	const char *p = line;
	unsigned long n;
	size_t klen;
	char *end;

	if (strncmp(p, "Node ", 5) != 0)
		return -EINVAL;
	p += 5;
	if (topo_parse_uint(&p, INT_MAX, &n) < 0 || *p != ' ')
		return -EINVAL;
	p = topo_skip_space(p);
	klen = strcspn(p, ": \n");
	if (klen == 0 || klen >= key_size || p[klen] != ':')
		return -EINVAL;
	memcpy(key, p, klen);
	key[klen] = '\0';
	p = topo_skip_space(p + klen + 1);
	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	errno = 0;
	*kb = strtoull(p, &end, 10);
	if (errno != 0)
		return -EINVAL;
	*node = (int)n;
	return 0;
}

/* Pure: MemTotal and MemFree of node from a nodeN/meminfo text, in bytes. Lines with other
 * keys are skipped; both keys must be present and belong to node. */
static int topo_parse_meminfo(const char *text, int node, uint64_t *total, uint64_t *free_b)
{
	uint64_t t = 0, f = 0;
	bool have_t = false, have_f = false;

	for (const char *line = text; *line != '\0';) {
		const char *nl = strchr(line, '\n');
		char key[32];
		uint64_t kb;
		int n;

		if (topo_parse_meminfo_line(line, &n, key, sizeof(key), &kb) == 0 && n == node &&
		    kb <= UINT64_MAX / 1024) {
			if (strcmp(key, "MemTotal") == 0) {
				t = kb * 1024;
				have_t = true;
			} else if (strcmp(key, "MemFree") == 0) {
				f = kb * 1024;
				have_f = true;
			}
		}
		if (!nl)
			break;
		line = nl + 1;
	}
	if (!have_t || !have_f || f > t)
		return -EINVAL;
	*total = t;
	*free_b = f;
	return 0;
}

/* Pure: the block size from block_size_bytes (hex, no 0x); a whole number of frames. */
static int topo_parse_block_size(const char *text, uint64_t *out)
{
	const char *p = topo_skip_space(text);
	char *end;
	uint64_t v;

	if (!isxdigit((unsigned char)*p))
		return -EINVAL;
	errno = 0;
	v = strtoull(p, &end, 16);
	if (errno != 0 || v == 0 || v % FRAME_SIZE != 0 || *topo_skip_space(end) != '\0')
		return -EINVAL;
	*out = v;
	return 0;
}

static int topo_read_node_file(const struct topology *t, int node, const char *name, char *buf,
			       char *path, size_t path_size)
{
	int r = topo_path(path, path_size, t->sysfs_root, NODE_DIR "/node%d/%s", node, name);

	return r < 0 ? r : file_read_small(path, buf, SYSFS_BUF);
}

struct cpu_add_ctx {
	struct topology *t;
	int node;
};

/* Grows cpu_node to hold cpu; new slots are -1 (absent). */
static int topo_grow_cpus(struct topology *t, int cpu)
{
	int size = t->nr_cpus;
	int *p;

	if (cpu < size)
		return 0;
	while (size <= cpu)
		size = size ? size * 2 : 64;
	p = realloc(t->cpu_node, (size_t)size * sizeof(*p));
	if (!p)
		return -ENOMEM;
	for (int i = t->nr_cpus; i < size; i++)
		p[i] = -1;
	t->cpu_node = p;
	t->nr_cpus = size;
	return 0;
}

static int topo_add_cpu(void *ctx, int cpu)
{
	struct cpu_add_ctx *c = ctx;
	int r = topo_grow_cpus(c->t, cpu);

	if (r < 0)
		return r;
	if (c->t->cpu_node[cpu] >= 0)
		return -EINVAL; /* a CPU on two nodes */
	c->t->cpu_node[cpu] = c->node;
	c->t->node[c->node].nr_cpus++;
	return 0;
}

static int topo_load_node(struct topology *t, int node)
{
	char buf[SYSFS_BUF], path[PATH_MAX];
	struct cpu_add_ctx ctx = {t, node};
	struct topo_node *n = &t->node[node];
	int r;

	r = topo_read_node_file(t, node, "cpulist", buf, path, sizeof(path));
	if (r >= 0)
		r = topo_parse_list(buf, TOPO_MAX_CPUS - 1, topo_add_cpu, &ctx);
	if (r < 0)
		return log_error_errno(r, "topology: cannot use %s", path);
	r = topo_read_node_file(t, node, "meminfo", buf, path, sizeof(path));
	if (r >= 0)
		r = topo_parse_meminfo(buf, node, &n->mem_total, &n->mem_free);
	if (r < 0)
		return log_error_errno(
		    r, "topology: cannot use %s (needs Node %d MemTotal and MemFree)", path, node);
	return 0;
}

static int topo_mark_node(void *ctx, int node)
{
	struct topology *t = ctx;
	char path[PATH_MAX];
	struct stat st;
	int r = topo_path(path, sizeof(path), t->sysfs_root, NODE_DIR "/node%d", node);

	if (r < 0)
		return r;
	/* `possible` may name nodes that never came up; only a node directory makes one real. */
	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
		return 0;
	t->node[node].present = true;
	if (node >= t->nr_nodes)
		t->nr_nodes = node + 1;
	return 0;
}

/* Reads the node list (`online`, else `possible`) and marks the nodes whose directory exists. */
static int topo_load_node_list(struct topology *t)
{
	char buf[SYSFS_BUF], path[PATH_MAX];
	int r;

	r = topo_path(path, sizeof(path), t->sysfs_root, NODE_DIR "/online");
	if (r >= 0)
		r = file_read_small(path, buf, sizeof(buf));
	if (r == -ENOENT) {
		r = topo_path(path, sizeof(path), t->sysfs_root, NODE_DIR "/possible");
		if (r >= 0)
			r = file_read_small(path, buf, sizeof(buf));
	}
	if (r >= 0)
		r = topo_parse_list(buf, TOPO_MAX_NODES - 1, topo_mark_node, t);
	if (r < 0)
		return log_error_errno(r, "topology: cannot use node list %s (at most %d nodes)",
				       path, TOPO_MAX_NODES);
	if (t->nr_nodes == 0)
		return log_error_errno(-ENOENT, "topology: %s names no node with a directory",
				       path);
	return 0;
}

/* Pure: one node's distance row. The kernel prints one value per online node in id order,
 * so the i-th value belongs to the i-th present node. */
static int topo_parse_distance(struct topology *t, int from, const char *text)
{
	const char *p = text;
	int to = -1;

	for (;;) {
		unsigned long d;

		p = topo_skip_space(p);
		if (*p == '\0')
			break;
		do
			to++;
		while (to < t->nr_nodes && !t->node[to].present);
		if (to >= t->nr_nodes || topo_parse_uint(&p, DIST_UNREACHABLE, &d) < 0)
			return -EINVAL;
		if (*p != '\0' && !isspace((unsigned char)*p))
			return -EINVAL;
		t->distance[from][to] = (uint8_t)d;
	}
	do
		to++;
	while (to < t->nr_nodes && !t->node[to].present);
	return to >= t->nr_nodes ? 0 : -EINVAL; /* a row too short */
}

static int topo_load_distances(struct topology *t)
{
	char buf[SYSFS_BUF], path[PATH_MAX];
	int r;

	for (int i = 0; i < TOPO_MAX_NODES; i++)
		for (int j = 0; j < TOPO_MAX_NODES; j++)
			t->distance[i][j] = i == j ? 10 : DIST_UNREACHABLE;
	for (int n = 0; n < t->nr_nodes; n++) {
		if (!t->node[n].present)
			continue;
		r = topo_read_node_file(t, n, "distance", buf, path, sizeof(path));
		if (r >= 0)
			r = topo_parse_distance(t, n, buf);
		if (r < 0)
			return log_error_errno(r,
					       "topology: cannot use %s (one value 0-%d per node)",
					       path, DIST_UNREACHABLE);
	}
	return 0;
}

struct tier_add_ctx {
	struct topology *t;
	int tier;
};

static int topo_add_tier_node(void *ctx, int node)
{
	struct tier_add_ctx *c = ctx;
	struct topo_node *n = &c->t->node[node];

	/* Tiers hold memory nodes, which are online; a stray id is no reason to fail. */
	if (node >= c->t->nr_nodes || !n->present)
		return 0;
	if (n->tier >= 0 && n->tier != c->tier)
		return -EINVAL; /* a node in two tiers */
	n->tier = c->tier;
	return 0;
}

/* Parses "memory_tierN" into N; -1 for other entries. */
static int topo_tier_number(const char *name)
{
	const char *p = name + strlen("memory_tier");
	unsigned long v;

	if (strncmp(name, "memory_tier", strlen("memory_tier")) != 0 ||
	    topo_parse_uint(&p, INT_MAX, &v) < 0 || *p != '\0')
		return -1;
	return (int)v;
}

static int topo_load_tiers(struct topology *t)
{
	char buf[SYSFS_BUF], path[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int r;

	for (int n = 0; n < TOPO_MAX_NODES; n++)
		t->node[n].tier = -1;
	r = topo_path(path, sizeof(path), t->sysfs_root, TIER_DIR);
	if (r < 0)
		return r;
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? 0
				       : log_error_errno(-errno, "topology: cannot open %s", path);
	while ((de = readdir(d))) {
		struct tier_add_ctx ctx = {t, topo_tier_number(de->d_name)};

		if (ctx.tier < 0)
			continue;
		r = topo_path(path, sizeof(path), t->sysfs_root, TIER_DIR "/%s/nodelist",
			      de->d_name);
		if (r >= 0)
			r = file_read_small(path, buf, sizeof(buf));
		if (r >= 0)
			r = topo_parse_list(buf, TOPO_MAX_NODES - 1, topo_add_tier_node, &ctx);
		if (r < 0) {
			log_error_errno(r, "topology: cannot use %s", path);
			goto out;
		}
	}
	r = 0;
out:
	closedir(d);
	return r;
}

/* Pure: number of distinct populated tiers; *lowest gets the lowest-numbered one. */
static int topo_count_tiers(const struct topology *t, int *lowest)
{
	int populated = 0;

	*lowest = INT_MAX;
	for (int n = 0; n < t->nr_nodes; n++) {
		bool seen = false;
		int tier = t->node[n].tier;

		if (!t->node[n].present || tier < 0)
			continue;
		for (int m = 0; m < n; m++)
			seen |= t->node[m].present && t->node[m].tier == tier;
		populated += seen ? 0 : 1;
		*lowest = tier < *lowest ? tier : *lowest;
	}
	return populated;
}

/* Pure: slow/fast from the tiers read. More than one populated tier: the lowest-numbered is
 * fast. Otherwise the firmware put every node together, and CPU-less nodes are the best
 * guess for far memory (unless no node has CPUs, which would leave nothing fast). */
static void topo_detect_tiers(struct topology *t)
{
	int lowest;
	int populated = topo_count_tiers(t, &lowest);
	bool any_cpu = false;

	for (int n = 0; n < t->nr_nodes; n++)
		any_cpu |= t->node[n].present && t->node[n].nr_cpus > 0;
	t->detected_source = populated > 1 ? TIER_FROM_SYSFS : TIER_FROM_CPULESS;
	for (int n = 0; n < t->nr_nodes; n++) {
		struct topo_node *tn = &t->node[n];

		if (t->detected_source == TIER_FROM_SYSFS)
			tn->detected_slow = tn->present && tn->tier >= 0 && tn->tier != lowest;
		else
			tn->detected_slow = tn->present && any_cpu && tn->nr_cpus == 0;
		tn->slow = tn->detected_slow;
	}
	t->tier_source = t->detected_source;
}

static int topo_add_block(struct topology *t, uint64_t block, int node)
{
	if (block >= TOPO_MAX_BLOCKS)
		return -EINVAL;
	if (block >= t->nr_blocks) {
		uint64_t size = t->nr_blocks ? t->nr_blocks : 64;
		int16_t *p;

		while (size <= block)
			size *= 2;
		p = realloc(t->block_node, size * sizeof(*p));
		if (!p)
			return -ENOMEM;
		for (uint64_t i = t->nr_blocks; i < size; i++)
			p[i] = -1;
		t->block_node = p;
		t->nr_blocks = size;
	}
	/* A block linked under two nodes spans both: no single answer, so none. */
	t->block_node[block] = t->block_node[block] == -1 ? (int16_t)node : -1;
	return 0;
}

static int topo_load_node_blocks(struct topology *t, int node)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int r = topo_path(path, sizeof(path), t->sysfs_root, NODE_DIR "/node%d", node);

	if (r < 0)
		return r;
	d = opendir(path);
	if (!d)
		return log_error_errno(-errno, "topology: cannot open %s", path);
	while ((de = readdir(d))) {
		const char *p = de->d_name + strlen("memory");
		unsigned long block;

		if (strncmp(de->d_name, "memory", strlen("memory")) != 0 ||
		    topo_parse_uint(&p, ULONG_MAX, &block) < 0 || *p != '\0')
			continue;
		r = topo_add_block(t, block, node);
		if (r < 0) {
			log_error_errno(r, "topology: cannot map %s/%s (at most %u blocks)", path,
					de->d_name, TOPO_MAX_BLOCKS);
			goto out;
		}
	}
	r = 0;
out:
	closedir(d);
	return r;
}

static int topo_load_blocks(struct topology *t)
{
	char buf[SYSFS_BUF], path[PATH_MAX];
	int r;

	r = topo_path(path, sizeof(path), t->sysfs_root, MEMORY_DIR "/block_size_bytes");
	if (r >= 0)
		r = file_read_small(path, buf, sizeof(buf));
	if (r == -ENOENT) {
		log_notice("topology: no memory block map (%s: %s); physical addresses will not be "
			   "mapped to nodes",
			   path, strerror(ENOENT));
		return 0;
	}
	if (r >= 0)
		r = topo_parse_block_size(buf, &t->block_size);
	if (r < 0)
		return log_error_errno(
		    r, "topology: cannot use %s (hex byte count, whole 4 KiB pages)", path);
	for (int n = 0; n < t->nr_nodes; n++) {
		if (!t->node[n].present)
			continue;
		r = topo_load_node_blocks(t, n);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Pure: nearest fast node to `from` by SLIT distance; ties go to the lowest id. */
static int topo_nearest_fast(const struct topology *t, int from)
{
	int best = -1;

	for (int n = 0; n < t->nr_nodes; n++) {
		if (!topology_node_is_fast(t, n))
			continue;
		if (best < 0 || t->distance[from][n] < t->distance[from][best])
			best = n;
	}
	return best;
}

static void topo_compute_fast(struct topology *t)
{
	for (int c = 0; c < t->nr_cpus; c++) {
		int node = t->cpu_node[c];

		t->cpu_fast_node[c] = node < 0 ? -1 : topo_nearest_fast(t, node);
	}
}

/* The arrays grew by doubling; the counts promised by the header are highest id + 1. */
static void topo_trim_counts(struct topology *t)
{
	while (t->nr_cpus > 0 && t->cpu_node[t->nr_cpus - 1] < 0)
		t->nr_cpus--;
	while (t->nr_blocks > 0 && t->block_node[t->nr_blocks - 1] < 0)
		t->nr_blocks--;
}

static int topo_load_all(struct topology *t)
{
	char path[PATH_MAX];
	struct stat st;
	int r;

	r = topo_path(path, sizeof(path), t->sysfs_root, NODE_DIR);
	if (r < 0)
		return log_error_errno(r, "topology: sysfs root too long: %s", t->sysfs_root);
	if (stat(path, &st) < 0)
		return log_error_errno(-errno, "topology: cannot find NUMA nodes at %s", path);
	r = topo_load_node_list(t);
	for (int n = 0; r >= 0 && n < t->nr_nodes; n++)
		if (t->node[n].present)
			r = topo_load_node(t, n);
	if (r >= 0)
		r = topo_load_distances(t);
	if (r >= 0)
		r = topo_load_tiers(t);
	if (r < 0)
		return r;
	topo_detect_tiers(t);
	r = topo_load_blocks(t);
	if (r < 0)
		return r;
	topo_trim_counts(t);
	t->cpu_fast_node = calloc(t->nr_cpus ? (size_t)t->nr_cpus : 1, sizeof(int));
	if (!t->cpu_fast_node)
		return log_error_errno(-ENOMEM, "topology: out of memory");
	topo_compute_fast(t);
	return 0;
}

int topology_load(const char *sysfs_root, struct topology **out)
{
	struct topology *t = calloc(1, sizeof(*t));
	int r;

	if (!t)
		return log_error_errno(-ENOMEM, "topology: out of memory");
	t->sysfs_root = strdup(sysfs_root);
	if (!t->sysfs_root) {
		r = log_error_errno(-ENOMEM, "topology: out of memory");
		goto fail;
	}
	r = topo_load_all(t);
	if (r < 0)
		goto fail;
	*out = t;
	return 0;
fail:
	topology_free(t);
	return r;
}

void topology_free(struct topology *t)
{
	if (!t)
		return;
	free(t->cpu_node);
	free(t->cpu_fast_node);
	free(t->block_node);
	free(t->sysfs_root);
	free(t);
}

static bool topo_present(const struct topology *t, int node)
{
	return node >= 0 && node < t->nr_nodes && t->node[node].present;
}

static bool topo_list_has(const struct node_list *l, int node)
{
	for (int i = 0; i < l->n; i++)
		if (l->node[i] == node)
			return true;
	return false;
}

/* Validates both lists before anything changes, so a rejected config leaves t as it was. */
static int topo_check_lists(const struct topology *t, const struct node_list *fast,
			    const struct node_list *slow)
{
	for (int i = 0; i < fast->n; i++) {
		if (!topo_present(t, fast->node[i]))
			return log_error_errno(-EINVAL, "tiers.fast_nodes: node %d does not exist",
					       fast->node[i]);
		if (topo_list_has(slow, fast->node[i]))
			return log_error_errno(
			    -EINVAL, "tiers: node %d is in both fast_nodes and slow_nodes",
			    fast->node[i]);
	}
	for (int i = 0; i < slow->n; i++)
		if (!topo_present(t, slow->node[i]))
			return log_error_errno(-EINVAL, "tiers.slow_nodes: node %d does not exist",
					       slow->node[i]);
	return 0;
}

int topology_apply_config(struct topology *t, const struct pghotd_config *cfg)
{
	const struct node_list *fast = &cfg->tiers.fast_nodes;
	const struct node_list *slow = &cfg->tiers.slow_nodes;
	int r = topo_check_lists(t, fast, slow);

	if (r < 0)
		return r;
	for (int n = 0; n < t->nr_nodes; n++) {
		struct topo_node *tn = &t->node[n];

		if (!tn->present)
			continue;
		if (topo_list_has(fast, n))
			tn->slow = false;
		else if (topo_list_has(slow, n))
			tn->slow = true;
		else if (fast->n > 0 && slow->n == 0)
			tn->slow = true;
		else if (slow->n > 0 && fast->n == 0)
			tn->slow = false;
		else
			tn->slow = tn->detected_slow;
	}
	t->tier_source = fast->n > 0 || slow->n > 0 ? TIER_FROM_CONFIG : t->detected_source;
	topo_compute_fast(t);
	return 0;
}

int topology_read_meminfo(const struct topology *t, int n, uint64_t *total, uint64_t *free_b)
{
	char buf[SYSFS_BUF], path[PATH_MAX];
	int r = topo_read_node_file(t, n, "meminfo", buf, path, sizeof(path));

	return r < 0 ? r : topo_parse_meminfo(buf, n, total, free_b);
}

int topology_read_marks(struct topology *t, const char *procfs_root)
{
	uint64_t pages[TOPO_MAX_NODES] = {0};
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	char path[PATH_MAX];
	int r = snprintf(path, sizeof(path), "%s/zoneinfo", procfs_root);

	r = r < 0 || (size_t)r >= sizeof(path) ? -ENAMETOOLONG
					       : zoneinfo_read_marks(path, pages, TOPO_MAX_NODES);
	for (int n = 0; n < TOPO_MAX_NODES; n++)
		t->node[n].mem_mark = r < 0			     ? 0
				      : pages[n] > UINT64_MAX / page ? UINT64_MAX
								     : pages[n] * page;
	return r;
}

int topology_refresh_free(struct topology *t)
{
	uint64_t total[TOPO_MAX_NODES], free_b[TOPO_MAX_NODES];
	int r;

	for (int n = 0; n < t->nr_nodes; n++) {
		if (!t->node[n].present)
			continue;
		r = topology_read_meminfo(t, n, &total[n], &free_b[n]);
		if (r < 0)
			return r;
	}
	for (int n = 0; n < t->nr_nodes; n++) {
		if (!t->node[n].present)
			continue;
		t->node[n].mem_total = total[n];
		t->node[n].mem_free = free_b[n];
	}
	return 0;
}

int topology_nr_slow(const struct topology *t)
{
	int nr = 0;

	for (int n = 0; n < t->nr_nodes; n++)
		nr += t->node[n].present && t->node[n].slow;
	return nr;
}

int topology_nr_fast(const struct topology *t)
{
	int nr = 0;

	for (int n = 0; n < t->nr_nodes; n++)
		nr += topology_node_is_fast(t, n);
	return nr;
}

bool topology_node_is_slow(const struct topology *t, int node)
{
	return topo_present(t, node) && t->node[node].slow;
}

bool topology_node_is_fast(const struct topology *t, int node)
{
	return topo_present(t, node) && !t->node[node].slow && t->node[node].mem_total > 0;
}

int topology_node_of_pfn(const struct topology *t, uint64_t pfn)
{
	uint64_t block;

	if (t->block_size == 0)
		return -1;
	block = pfn / (t->block_size / FRAME_SIZE);
	return block < t->nr_blocks ? t->block_node[block] : -1;
}

int topology_cpu_node(const struct topology *t, int cpu)
{
	return cpu >= 0 && cpu < t->nr_cpus ? t->cpu_node[cpu] : -1;
}

int topology_fast_nodes_by_distance(const struct topology *t, int from, int *out, int max)
{
	int nr = 0;

	if (!topo_present(t, from))
		return -EINVAL;
	/* Insertion sort by (distance, id): at most 64 nodes, and nodes arrive in id order, so
	 * a strict comparison keeps ties by id. */
	for (int n = 0; n < t->nr_nodes; n++) {
		int i;

		if (!topology_node_is_fast(t, n))
			continue;
		for (i = nr; i > 0 && t->distance[from][out[i - 1]] > t->distance[from][n]; i--)
			if (i < max)
				out[i] = out[i - 1];
		if (i < max)
			out[i] = n;
		if (nr < max)
			nr++;
	}
	return nr;
}

unsigned topology_free_percent(const struct topology *t, int node)
{
	const struct topo_node *tn;

	if (!topo_present(t, node) || t->node[node].mem_total == 0)
		return 0;
	tn = &t->node[node];
	return (unsigned)(tn->mem_free * 100 / tn->mem_total);
}

/* Appends node's CPUs as ranges ("0-3,8") to buf. */
static void topo_format_cpus(const struct topology *t, int node, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int c = 0; c < t->nr_cpus && len < size; c++) {
		int end = c;
		int n;

		if (t->cpu_node[c] != node)
			continue;
		while (end + 1 < t->nr_cpus && t->cpu_node[end + 1] == node)
			end++;
		n = end > c ? snprintf(buf + len, size - len, "%s%d-%d", len ? "," : "", c, end)
			    : snprintf(buf + len, size - len, "%s%d", len ? "," : "", c);
		len += n > 0 ? (size_t)n : 0;
		c = end;
	}
}

static void topo_describe_node(const struct topology *t, int n, char *line, size_t size)
{
	const struct topo_node *tn = &t->node[n];
	char cpus[256], tier[32], mark[48] = "";
	int len;

	topo_format_cpus(t, n, cpus, sizeof(cpus));
	if (tn->tier >= 0)
		snprintf(tier, sizeof(tier), "tier %d", tn->tier);
	else
		snprintf(tier, sizeof(tier), "no tier");
	if (tn->mem_mark)
		snprintf(mark, sizeof(mark), ", kernel keeps %" PRIu64 " MiB", tn->mem_mark >> 20);
	len = snprintf(
	    line, size, "node %d: %s, %s, cpus %s, %" PRIu64 " MiB, %u%% free%s, distances", n,
	    tn->slow			  ? "slow"
	    : topology_node_is_fast(t, n) ? "fast"
					  : "no memory",
	    tier, cpus[0] ? cpus : "none", tn->mem_total >> 20, topology_free_percent(t, n), mark);
	for (int m = 0; m < t->nr_nodes && len > 0 && (size_t)len < size; m++)
		if (t->node[m].present)
			len += snprintf(line + len, size - (size_t)len, " %u", t->distance[n][m]);
}

void topology_describe(const struct topology *t, void (*line)(void *ctx, const char *s), void *ctx)
{
	char buf[1024];

	snprintf(buf, sizeof(buf), "tiers: %s", tier_source_describe(t->tier_source));
	line(ctx, buf);
	for (int n = 0; n < t->nr_nodes; n++) {
		if (!t->node[n].present)
			continue;
		topo_describe_node(t, n, buf, sizeof(buf));
		line(ctx, buf);
	}
}

const char *tier_source_describe(enum tier_source s)
{
	switch (s) {
	case TIER_FROM_SYSFS:
		return "from the kernel's memory tiers (lowest populated tier fast, the rest slow)";
	case TIER_FROM_CPULESS:
		return "all nodes in one memory tier, so CPU-less nodes are taken as slow";
	case TIER_FROM_CONFIG:
		return "set by tiers.fast_nodes / tiers.slow_nodes in the config";
	}
	return "unknown";
}
