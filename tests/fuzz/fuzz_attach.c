/*
 * fuzz_attach: what a local process sends on the attach socket
 * (daemon/attach.c): the AttachRequest of a new connection
 * (attach_handle) and, after it, PeersRequests (peers_handle), each
 * answered on a socketpair like the real connection.
 *
 * Input: byte 0 selects the handler (even: attach, odd: peers), the rest is
 * the datagram. The attach path runs every check of the request against a
 * daemon with max_clients = 0, so a well-formed request is refused before
 * shared memory is created (creating jobs and regions is not parsing and
 * is not fuzzed here). The peers path runs against one started job
 * "fuzzjob" of 6 ranks: ranks 0, 1, 3 attached here (1 without a
 * connection), 2 and 4 on another node, 5 unknown.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "control.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct daemon d;
static struct job job;
static struct client cl[3];
static struct conn conns[3];
static int32_t node_of[6] = {0, 0, 1, 0, 1, -1};
static int sv[2] = {-1, -1};

static void setup(void)
{
	fuzz_daemon_init(&d);
	d.cfg.max_clients = 0;
	d.cfg.max_heap_bytes = 1u << 20;
	fuzz_socketpair(sv);
	snprintf(job.key, sizeof(job.key), "fuzzjob");
	job.size = 6;
	job.ready = 1;
	job.node_of = node_of;
	static const int32_t ranks[3] = {0, 1, 3};
	for (int i = 0; i < 3; i++) {
		cl[i].job = &job;
		cl[i].rank = ranks[i];
		cl[i].replied = 1;
		cl[i].heap.fd = memfd_create("fuzz-heap", MFD_CLOEXEC);
		cl[i].heap.bytes = 4096;
		cl[i].conn = i == 1 ? NULL : &conns[i];
		cl[i].ctl_next = i < 2 ? &cl[i + 1] : NULL;
		conns[i].d = &d;
		conns[i].fd = sv[0];
		conns[i].client = &cl[i];
	}
	d.clients = &cl[0];
	d.nclients = 3;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (sv[0] < 0)
		setup();
	if (size < 1)
		return 0;
	if (data[0] & 1) {
		int rc = peers_handle(&d, &conns[0], data + 1, size - 1);
		FUZZ_CHECK(rc <= 0);
	} else {
		struct conn cn = {.d = &d, .fd = sv[0]};
		int rc = attach_handle(&d, &cn, data + 1, size - 1);
		FUZZ_CHECK(rc < 0); /* max_clients 0: nothing is ever accepted */
		FUZZ_CHECK(cn.client == NULL);
	}
	fuzz_drain(sv[1]);
	return 0;
}
