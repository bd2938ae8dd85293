/*
 * fuzz_stats: a StatsRequest datagram on the stats socket: stats_request
 * (daemon/stats.c) parses it as control.c hands it over, and stats_pump
 * sends the reply (in pieces for a chunked request) until it is done or the
 * socket is full. The daemon has one client of a job and, when the request
 * asks for them, the settings go into the reply.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "fuzz_util.h"
#include "stats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct daemon d;
static struct job job;
static struct client cl;
static int sv[2] = {-1, -1};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (sv[0] < 0) {
		fuzz_daemon_init(&d);
		fuzz_socketpair(sv);
		snprintf(job.key, sizeof(job.key), "fuzzjob");
		job.size = 2;
		cl.job = &job;
		cl.rank = 1;
		d.clients = &cl;
		d.nclients = 1;
		d.jobs = &job;
	}
	/* an empty datagram reads as a hang-up (recv returns 0): skip it */
	if (size == 0 || size > 4096)
		return 0;
	struct stats_stream *ss = NULL;
	if (stats_request(&d, sv[0], data, size, &ss))
		return 0;
	/* 1: the socket is full; the reader (us) takes the pieces, go on */
	while (stats_pump(&d, sv[0], ss) == 1)
		fuzz_drain(sv[1]);
	stats_stream_free(ss);
	fuzz_drain(sv[0]);
	fuzz_drain(sv[1]);
	return 0;
}
