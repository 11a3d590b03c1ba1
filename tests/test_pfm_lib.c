/* Tests for pfm_lib: libpfm4 loaded at run time. The real library (libpfm4 is a build
 * dependency, so it is there), a name that no library has, and a library without libpfm4's
 * functions (libc) give the three outcomes; the process's load happens at the first
 * pfm_lib_get, not at start. */
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sources/pmu/pfm_lib.h"

#define MISSING "libpfm-pghotd-test-missing.so.4"

static void missing_library_is_enoent_naming_it(void **state)
{
	struct pfm_lib lib;

	(void)state;
	assert_int_equal(pfm_lib_open(MISSING, &lib), -ENOENT);
	assert_int_equal(lib.err, -ENOENT);
	assert_non_null(strstr(lib.why, "cannot load libpfm4: " MISSING ": cannot open shared "
					"object file: No such file or directory"));
	assert_null(lib.ops.initialize);
}

static void library_without_the_functions_is_elibbad_naming_the_first(void **state)
{
	struct pfm_lib lib;

	(void)state;
	assert_int_equal(pfm_lib_open("libc.so.6", &lib), -ELIBBAD);
	assert_non_null(strstr(lib.why, "cannot load libpfm4: "));
	assert_non_null(strstr(lib.why, "undefined symbol: pfm_initialize"));
	assert_null(lib.ops.strerror);
}

static void real_library_resolves_its_functions(void **state)
{
	struct pfm_lib lib;

	(void)state;
	assert_int_equal(pfm_lib_open(PFM_LIB_SONAME, &lib), 0);
	assert_string_equal(lib.why, "");
	assert_int_equal(lib.ops.initialize(), PFM_SUCCESS);
	assert_string_equal(lib.ops.strerror(PFM_ERR_NOTFOUND), "event not found");
	assert_non_null(lib.ops.get_os_event_encoding);
}

static void process_library_loads_at_first_use_and_once(void **state)
{
	const struct pfm_lib *a, *b;

	(void)state;
	/* this program links what pghotd links: libpfm4 must not come with it */
	assert_null(dlopen(PFM_LIB_SONAME, RTLD_NOW | RTLD_NOLOAD));
	a = pfm_lib_get();
	assert_int_equal(a->err, 0);
	assert_non_null(dlopen(PFM_LIB_SONAME, RTLD_NOW | RTLD_NOLOAD));
	b = pfm_lib_get();
	assert_ptr_equal(a, b);
	assert_ptr_equal(a->ops.initialize, b->ops.initialize);
}

int main(void)
{
	/* first: the other tests load libpfm.so.4 through pfm_lib_open */
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(process_library_loads_at_first_use_and_once),
	    cmocka_unit_test(missing_library_is_enoent_naming_it),
	    cmocka_unit_test(library_without_the_functions_is_elibbad_naming_the_first),
	    cmocka_unit_test(real_library_resolves_its_functions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
