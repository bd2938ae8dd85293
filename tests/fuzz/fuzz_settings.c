/*
 * fuzz_settings: the configuration file parser (settings_load_file) on a
 * temporary file holding the input, then settings_check and the formatting
 * of every value (what --print-config and the stats reply show).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_util.h"
#include "settings.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!path[0]) {
		snprintf(path, sizeof(path), "/tmp/hoist-fuzz-settings.XXXXXX");
		int fd = mkstemp(path);
		if (fd < 0) {
			perror("mkstemp");
			abort();
		}
		close(fd);
	}
	FILE *f = fopen(path, "we");
	if (!f)
		abort();
	if (size && fwrite(data, 1, size, f) != size)
		abort();
	fclose(f);
	struct hoistd_settings s;
	settings_defaults(&s);
	int line = -1;
	int rc = settings_load_file(&s, path, &line);
	FUZZ_CHECK(rc <= 0);
	if (rc)
		FUZZ_CHECK(line >= 1);
	const char *why = NULL;
	if (settings_check(&s, &why))
		FUZZ_CHECK(why != NULL);
	char buf[300];
	for (int k = 0; k < SET__COUNT; k++) {
		const char *v = settings_format(&s, k, buf, sizeof(buf));
		FUZZ_CHECK(v != NULL);
	}
	return 0;
}

__attribute__((destructor)) static void cleanup(void)
{
	if (path[0])
		unlink(path);
}
