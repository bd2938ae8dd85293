/*
 * fuzz_wire: what another daemon sends on a tcp connection once the
 * handshake is done, through the receive-path functions outside tcp.c:
 *
 *   - the frame header checks (type, hlen <= WIRE_MAX_EXT, plen <=
 *     WIRE_MAX_PAYLOAD) as tcp.c's conn_read applies them (restated here:
 *     conn_read and rx_begin/rx_end are static in tcp.c),
 *   - am_payload_ok and am_dispatch for the active messages (W_MEMBER's
 *     job id is recomputed from the fuzzed key and uid so that the
 *     announcement reaches the control queue),
 *   - pack_check and, for a valid pack, pack_execute against a job of
 *     three PEs, two of them on this node with 4 KiB heaps,
 *   - W_AMO (an atomic executed against that job, the reply going to a
 *     stub transport that checks it) and W_AMO_REPLY (matching no atomic
 *     in flight: ignored),
 *   - W_PACK_REPLY's header rules and a PeerHello (handshake payload)
 *     through the generated protobuf-c parser.
 *
 * Input: struct wire_hdr, hlen bytes of extension header, the payload
 * (the rest; hdr.plen is ignored: the payload is what the input holds).
 * Not covered (static in tcp.c): the handshake MAC and state machine,
 * address resolution of the put and get frames, the streamed W_PACK_REPLY parser
 * (pack_stream) and the in-flight ring's tag matching.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "am.h"
#include "cmdq.h"
#include "fuzz_util.h"
#include "hoist.pb-c.h"
#include "cluster.h"
#include "pack.h"
#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define HEAP 4096u

static struct daemon d;
static struct job job;
static struct client c0, c1;
static struct client *pes[3] = {&c0, &c1, NULL};
static char heap0[HEAP], heap1[HEAP];
static char out[WIRE_AM_MAX_PAYLOAD];
static _Alignas(8) char ext[WIRE_MAX_EXT];
static int amo_replies;

/* The reply of an atomic goes back to its sender: well formed, status 0 or
 * a -errno. */
static int stub_am_send(struct daemon *dd, int32_t node, uint8_t type, const void *e, uint16_t hlen,
			const void *payload, uint64_t plen)
{
	(void)dd, (void)payload;
	FUZZ_CHECK(node == 1 && type == W_AMO_REPLY && hlen == sizeof(struct wire_amo_reply) && !plen);
	struct wire_amo_reply r;
	memcpy(&r, e, sizeof(r));
	FUZZ_CHECK(r.status == 0 || r.status == -ECONNRESET || r.status == -EINVAL ||
		   r.status == -EFAULT);
	amo_replies++;
	return 0;
}

static const struct transport_ops stub_xport = {.name = "stub", .am_send = stub_am_send};

static void setup(void)
{
	fuzz_daemon_init(&d);
	barrier_am_register(); /* the handlers hoistd registers at start */
	coll_am_register();
	jobs_am_register();
	amo_am_register();
	d.xport = &stub_xport;
	if (cmdq_init(&d.to_control))
		abort();
	c0.heap.base = heap0;
	c0.heap.bytes = HEAP;
	c1.heap.base = heap1;
	c1.heap.bytes = HEAP;
	job.id = 42;
	job.size = 3;
	job.pe = pes;
	d.pjobs = &job;
}

static void drain_control(void)
{
	struct cmd *c = cmdq_take_all(&d.to_control);
	while (c) {
		struct cmd *next = c->next;
		free(c->obj);
		free(c);
		c = next;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!d.pjobs)
		setup();
	struct wire_hdr h;
	if (size < sizeof(h))
		return 0;
	memcpy(&h, data, sizeof(h));
	data += sizeof(h);
	size -= sizeof(h);
	/* conn_read's header checks */
	if (h.type == 0 || h.type >= W__COUNT || h.hlen > WIRE_MAX_EXT)
		return 0;
	if (h.hlen > size)
		return 0;
	memcpy(ext, data, h.hlen);
	const char *payload = (const char *)data + h.hlen;
	uint64_t plen = size - h.hlen;
	if (plen > WIRE_MAX_PAYLOAD)
		return 0;
	switch (h.type) {
	case W_PACK: {
		if (h.hlen != sizeof(struct wire_pack) || plen > WIRE_AM_MAX_PAYLOAD)
			return 0;
		struct wire_pack w;
		memcpy(&w, ext, sizeof(w));
		uint64_t rl = 0;
		if (pack_check(&w, payload, plen, &rl))
			return 0;
		FUZZ_CHECK(rl <= WIRE_AM_MAX_PAYLOAD);
		/* the sender names this job or another one */
		if (w.job & 1)
			w.job = job.id;
		uint64_t ops, bytes;
		uint64_t got = pack_execute(&d, &w, payload, out, &ops, &bytes);
		FUZZ_CHECK(got <= rl && ops <= w.nelem);
		return 0;
	}
	case W_PACK_REPLY: {
		if (h.hlen != sizeof(struct wire_pack_reply) || plen > WIRE_AM_MAX_PAYLOAD)
			return 0;
		return 0;
	}
	case W_HELLO:
	case W_AUTH: {
		Hoist__PeerHello *m = hoist__peer_hello__unpack(NULL, plen, (const uint8_t *)payload);
		if (m)
			hoist__peer_hello__free_unpacked(m, NULL);
		return 0;
	}
	default:
		break;
	}
	if (!am_handles(h.type))
		return 0;
	if (!am_payload_ok(h.type, ext, h.hlen, plen))
		return 0;
	if (h.type == W_PE_GONE)
		return 0; /* its dispatch needs the address cache of a running daemon */
	if (h.type == W_MEMBER) {
		struct wire_member m;
		memcpy(&m, ext, sizeof(m));
		char key[256];
		memcpy(key, payload, m.keylen);
		key[m.keylen] = 0;
		m.job = cluster_job_id(&d.net, m.uid, key);
		memcpy(ext, &m, sizeof(m));
	}
	/* barrier and collective messages name job 43 (unknown): their checks
	 * only; executing them needs a running job */
	if (h.type == W_AMO) { /* an atomic for this job (odd) or another one */
		uint64_t jid = (ext[0] & 1) ? job.id : 43;
		memcpy(ext, &jid, 8);
	} else if (h.type != W_MEMBER) {
		uint64_t other = 43;
		memcpy(ext, &other, 8);
	}
	int replies = amo_replies;
	int rc = am_dispatch(&d, 1, h.type, ext, h.hlen, payload, plen);
	FUZZ_CHECK(rc == 0 || rc == -EPROTO || rc == -ENOMEM);
	FUZZ_CHECK(amo_replies == replies + (h.type == W_AMO)); /* every atomic is answered */
	drain_control();
	return 0;
}
