/* pfm_lib: see pfm_lib.h. */
#include "sources/pmu/pfm_lib.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* The table's types are the header's: a libpfm4 that changed a prototype fails the build. */
#define SAME_TYPE(fn, member)                                                                      \
	_Static_assert(__builtin_types_compatible_p(__typeof__(&fn),                               \
						    __typeof__(((struct pfm_ops *)0)->member)),    \
		       #fn " differs from <perfmon/pfmlib.h>")
SAME_TYPE(pfm_initialize, initialize);
SAME_TYPE(pfm_get_os_event_encoding, get_os_event_encoding);
SAME_TYPE(pfm_strerror, strerror);

static int fail(struct pfm_lib *out, int err)
{
	const char *e = dlerror();

	memset(&out->ops, 0, sizeof(out->ops));
	snprintf(out->why, sizeof(out->why), "cannot load libpfm4: %s", e ? e : "unknown error");
	out->err = err;
	return err;
}

/* dlsym(name), unless an earlier one failed: dlerror() then still tells of that one. */
static void *sym(void *h, const char *name, bool *missing)
{
	void *p = *missing ? NULL : dlsym(h, name);

	*missing = !p;
	return p;
}

int pfm_lib_open(const char *soname, struct pfm_lib *out)
{
	struct pfm_ops ops;
	bool missing = false;
	void *h;

	dlerror(); /* a stale error would stand for ours */
	h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return fail(out, -ENOENT);
	/* POSIX dlsym: a function's address converts from void * */
	ops.initialize = (pfm_err_t(*)(void))sym(h, "pfm_initialize", &missing);
	ops.get_os_event_encoding = (pfm_err_t(*)(const char *, int, pfm_os_t, void *))sym(
	    h, "pfm_get_os_event_encoding", &missing);
	ops.strerror = (const char *(*)(int))sym(h, "pfm_strerror", &missing);
	if (missing) {
		fail(out, -ELIBBAD);
		dlclose(h);
		return out->err;
	}
	out->err = 0;
	out->why[0] = '\0';
	out->ops = ops;
	return 0;
}

static struct pfm_lib process_lib;
static pthread_once_t process_once = PTHREAD_ONCE_INIT;

static void load_process_lib(void)
{
	pfm_lib_open(PFM_LIB_SONAME, &process_lib);
}

/* pthread_once orders the load's writes before every return from it, in any thread. */
const struct pfm_lib *pfm_lib_get(void)
{
	pthread_once(&process_once, load_process_lib);
	return &process_lib;
}
