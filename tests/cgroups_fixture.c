/* The per-cgroup figures' fixture (cgroups_fixture.h). */
#include "cgroups_fixture.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sys/topology.h"

static int put(const char *dir, const char *name, const char *text, size_t len)
{
	char path[512];
	FILE *f;
	int r = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	if (fwrite(text, 1, len, f) != len)
		r = -EIO;
	if (fclose(f) != 0 && r == 0)
		r = -EIO;
	return r;
}

/* The files procs.c and proc_info_read() read: stat (the start time), statm, comm. */
static int put_identity(const char *dir, pid_t pid, uint64_t resident)
{
	char text[256];
	int n, r;

	n = snprintf(text, sizeof(text),
		     "%d (w) S 1 1 1 0 -1 4194304 101 0 0 0 0 0 0 0 20 0 1 0 %d 3133440 389\n",
		     (int)pid, 1000 + (int)pid);
	r = put(dir, "stat", text, (size_t)n);
	n = snprintf(text, sizeof(text), "90000 %" PRIu64 " 0 0 0 0 0\n", resident);
	if (r == 0)
		r = put(dir, "statm", text, (size_t)n);
	return r < 0 ? r : put(dir, "comm", "w\n", 2);
}

/* The cgroup v2 line "0::<path>\n". */
static int put_cgroup(const char *dir, const char *path, size_t len)
{
	char *cg = malloc(len + 4);
	int r;

	if (!cg)
		return -ENOMEM;
	memcpy(cg, "0::", 3);
	memcpy(cg + 3, path, len);
	cg[len + 3] = '\n';
	r = put(dir, "cgroup", cg, len + 4);
	free(cg);
	return r;
}

static int put_numa_maps(const char *dir, const uint64_t *pages)
{
	char text[256];
	int n = snprintf(text, sizeof(text),
			 "7f0000000000 default anon=1 N0=%" PRIu64 " N1=%" PRIu64 " N2=%" PRIu64
			 " kernelpagesize_kB=4\n7f1000000000 default\n",
			 pages[0], pages[1], pages[2]);

	return put(dir, "numa_maps", text, (size_t)n);
}

int cgfx_proc(struct cgfx *f, pid_t pid, const char *path, size_t len, const uint64_t *pages)
{
	char dir[128];
	int64_t h;
	int r;

	snprintf(dir, sizeof(dir), "%s/%d", f->root, (int)pid);
	if (mkdir(dir, 0755) < 0)
		return -errno;
	r = put_identity(dir, pid, pages[0] + pages[1] + pages[2]);
	if (r == 0)
		r = put_cgroup(dir, path, len);
	if (r == 0)
		r = put_numa_maps(dir, pages);
	if (r < 0)
		return r;
	h = procs_handle(f->procs, pid);
	return h < 0 ? (int)h : 0;
}

int cgfx_render(struct cgfx *f, char **text, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *out = open_memstream(&buf, &n);
	int r;

	if (!out)
		return -errno;
	r = cgroups_render(f->cg, out);
	if (fclose(out) != 0 && r == 0)
		r = -EIO;
	if (r < 0) {
		free(buf);
		return r;
	}
	*text = buf;
	*len = n;
	return 0;
}

/* The registry, hot table, stats and configuration around the struct cgroups. */
static int cgfx_parts(struct cgfx *f, const char *fixtures, unsigned max_procs)
{
	char path[512];
	int r;

	snprintf(f->root, sizeof(f->root), "/tmp/pghotd-cgroups-XXXXXX");
	if (!mkdtemp(f->root)) {
		f->root[0] = '\0';
		return -errno;
	}
	r = procs_new(f->root, max_procs, &f->procs);
	if (r == 0)
		r = hot_table_new(4096, 4096, &f->hot);
	if (r == 0)
		r = config_new_defaults(&f->cfg);
	snprintf(path, sizeof(path), "%s/sysfs-3node-cxl", fixtures);
	if (r == 0)
		r = topology_load(path, &f->cfg->topo);
	stats_init(&f->stats, CGFX_NODES);
	return r;
}

int cgfx_new(const char *fixtures, const struct cgfx_opts *o, struct cgfx **out)
{
	struct cgfx *f = calloc(1, sizeof(*f));
	struct cgroups_deps d = {.nr_nodes = CGFX_NODES,
				 .reads_per_tick = o->reads_per_tick,
				 .walk_bytes = o->walk_bytes};
	int r;

	if (!f)
		return -ENOMEM;
	r = cgfx_parts(f, fixtures, o->max_procs);
	d.procfs_root = f->root;
	d.procs = f->procs;
	d.hot = f->hot;
	d.stats = &f->stats;
	memcpy(d.seed, "0123456789abcdef", SIPHASH_KEY_SIZE);
	if (r == 0)
		r = cgroups_new(&d, o->max_shown, &f->cg);
	if (r < 0) {
		cgfx_free(f);
		return r;
	}
	*out = f;
	return 0;
}

int cgfx_free(struct cgfx *f)
{
	char cmd[128];
	int r = 0;

	cgroups_free(f->cg);
	hot_table_free(f->hot);
	procs_free(f->procs);
	if (f->cfg) {
		topology_free(f->cfg->topo);
		f->cfg->topo = NULL;
		config_free(f->cfg);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->root);
	if (f->root[0] && system(cmd) != 0)
		r = -EIO;
	free(f);
	return r;
}
