/* pfm_lib: libpfm4, loaded at run time on first use instead of linked.
 *
 * Linking libpfm.so.4 made the dynamic loader apply its ~41,000 relative relocations at every
 * start of pghotd, --version and --status included (issue 46); only the PEBS source needs
 * it, so the library is dlopen()ed (RTLD_NOW | RTLD_LOCAL) the first time that source plans
 * its events, and kept for the life of the process (libpfm4 keeps its tables and reads
 * LIBPFM_FORCE_PMU once, at its first pfm_initialize). The types stay those of
 * <perfmon/pfmlib_perf_event.h>.
 *
 * A load that fails is kept too, with the reason (dlerror()'s text, which names the file), so
 * that the PEBS source reports itself unavailable with it: the caller logs it, once, where
 * it decides what to do. */
#ifndef PGHOTD_PFM_LIB_H
#define PGHOTD_PFM_LIB_H

#include <stddef.h>

#include <perfmon/pfmlib_perf_event.h>

/* The library pghotd's package depends on (libpfm4 in debian/control). */
#define PFM_LIB_SONAME	"libpfm.so.4"
#define PFM_LIB_WHY_MAX 384

/* The three libpfm4 functions pghotd calls, as the library has them. */
struct pfm_ops {
	pfm_err_t (*initialize)(void);
	pfm_err_t (*get_os_event_encoding)(const char *str, int dfl_plm, pfm_os_t os, void *args);
	const char *(*strerror)(int code);
};

/* A load of libpfm4, done or failed. */
struct pfm_lib {
	int err;		   /* 0 loaded; -ENOENT not loadable; -ELIBBAD a function missing */
	char why[PFM_LIB_WHY_MAX]; /* when err: "cannot load libpfm4: <dlerror()>" */
	struct pfm_ops ops;	   /* when loaded */
};

/* Loads soname and resolves the three functions, every call anew, and fills *out with the
 * outcome, a failure included (the handle is kept open on success). Returns out->err. Any
 * thread; tests give names that do not exist or lack the functions. */
int pfm_lib_open(const char *soname, struct pfm_lib *out);

/* The process's PFM_LIB_SONAME, loaded by the first call (pthread_once) and the same result
 * for every later one. Any thread; in pghotd the main thread, when the PEBS source starts or
 * --probe tries it. */
const struct pfm_lib *pfm_lib_get(void);

#endif
