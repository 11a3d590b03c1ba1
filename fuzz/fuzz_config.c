/* libFuzzer target: a configuration file's bytes, NUL bytes included, through config_text,
 * libconfig and pghotd's own validation (config_load_bytes, what --check-config and a reload
 * run). Beyond the sanitizers' crashes
 * and leaks it checks the operator's contract: a file is either accepted, and then prints and
 * reloads to an equal configuration, or refused with errors that each name "file:line: ". */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NAME "fuzz.conf"

/* True when msg starts with a file name, ':', a line number > 0, ": ". Errors inside an
 * @include'd file name that file instead of NAME, so any file name is accepted. */
static int names_file_line(const char *msg)
{
	const char *colon = strchr(msg, ':');
	const char *p;
	long line;

	if (!colon || colon == msg)
		return 0;
	p = colon + 1;
	if (!isdigit((unsigned char)*p))
		return 0;
	line = strtol(p, (char **)&p, 10);
	return line > 0 && p[0] == ':' && p[1] == ' ' && p[2] != '\0';
}

/* An accepted file printed by config_print (the --check-config output) must load again to an
 * equal configuration: the printout is itself a valid file. */
static void check_print_roundtrip(const struct pghotd_config *cfg)
{
	struct pghotd_config *again = NULL;
	struct config_errors errs = {0};
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return;
	config_print(cfg, f);
	if (fclose(f) != 0) {
		free(text);
		return;
	}
	if (config_load_string(text, "printed.conf", &again, &errs) != 0) {
		fprintf(stderr, "fuzz_config: the printout of an accepted file is refused: %s\n%s",
			errs.n ? errs.msg[0] : "(no message)", text);
		abort();
	}
	if (!config_equal(cfg, again)) {
		fprintf(stderr, "fuzz_config: the printout loads to a different configuration\n%s",
			text);
		abort();
	}
	config_free(again);
	config_errors_clear(&errs);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pghotd_config *cfg = NULL;
	struct config_errors errs = {0};
	int r;

	/* A relative @include resolves against NAME's directory, the working directory: fuzz/
	 * run.sh runs the target in an empty one, and an input naming an absolute path only adds
	 * another file's errors. */
	r = config_load_bytes((const char *)data, size, NAME, &cfg, &errs);
	if (r == 0) {
		if (errs.n != 0 || !cfg) {
			fprintf(stderr, "fuzz_config: accepted with %d errors\n", errs.n);
			abort();
		}
		check_print_roundtrip(cfg);
		config_free(cfg);
	} else {
		if (errs.n == 0) {
			fprintf(stderr, "fuzz_config: refused (%d) without an error message\n", r);
			abort();
		}
		for (int i = 0; i < errs.n; i++)
			if (!names_file_line(errs.msg[i])) {
				fprintf(stderr, "fuzz_config: error without file:line: \"%s\"\n",
					errs.msg[i]);
				abort();
			}
	}
	config_errors_clear(&errs);
	return 0;
}
