/*
 * osh_common.h - shared bits of the OpenSHMEM conformance programs: the
 * integration tests' reporting and progress watchdog (it_common.h), and
 * CHECK for a condition that must hold.
 */
#ifndef OSH_COMMON_H
#define OSH_COMMON_H

#include <shmem.h>
#include <shmemx.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it_common.h"

#define CHECK(cond, ...)                                                      \
	do {                                                                  \
		if (!(cond)) {                                                \
			it_log("check failed: %s", #cond);                    \
			IT_FAIL(__VA_ARGS__);                                 \
		}                                                             \
	} while (0)

/* no error kept by the library since the last look */
#define NO_ERROR(what)                                                        \
	do {                                                                  \
		int e_ = shmemx_last_error();                                 \
		if (e_)                                                       \
			IT_FAIL("%s: library error %s", what, shmemx_strerror(e_)); \
	} while (0)

static inline int osh_start(const char *name)
{
	it_name = name;
	shmem_init();
	it_rank = shmem_my_pe();
	it_watchdog(60);
	return it_rank;
}

static int osh_end(void)
{
	NO_ERROR("end");
	unsigned long f = it_failures;
	shmem_finalize();
	if (it_rank == 0 || f)
		fprintf(stderr, "[%s rank %d] %s\n", it_name, it_rank, f ? "FAILED" : "passed");
	return f ? 1 : 0;
}

#endif
