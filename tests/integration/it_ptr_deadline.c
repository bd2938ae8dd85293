/*
 * it_ptr_deadline: the first hoist_ptr to a peer asks the daemon for its
 * heap and waits for the answer; a daemon that never answers must cost a
 * NULL after HOIST_ATTACH_TIMEOUT_MS, not a hang (issue 10, item 1).
 *
 *   hoistrun -n 2 it_ptr_deadline     (under harness.sh)
 *
 * Rank 0 forgets the mapping of rank 1's heap that the node barrier made
 * at the job's first barrier, puts a silent socket in place of its attach
 * connection (the request goes nowhere, no answer comes), asks for rank
 * 1's heap (NULL,
 * -ETIMEDOUT kept for that peer), then puts the real connection back and
 * asks again: now the mapping works and shows what rank 1 wrote.
 */
#include <sys/socket.h>

#include "internal.h"
#include "it_common.h"

int main(void)
{
	int me, n;
	it_watchdog(40);
	it_init("it_ptr_deadline", &me, &n);
	if (n != 2) {
		IT_FAIL("run with -n 2");
		return it_finish();
	}
	uint64_t *x = it_malloc(64);
	*x = 0xfeed0000u + (uint64_t)me;
	IT_OK(hoist_barrier());
	if (me == 0) {
		struct hoist_ctx *c = hoist__ctx();
		struct hoist_peer *p = hoist__peer_find(c, 1);
		int sp[2];
		if (!p || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) != 0) {
			IT_FAIL("no peer entry for rank 1, or socketpair failed");
		} else {
			/* a one-node job's first barrier mapped every peer (the
			 * node barrier reads each PE's word in its heap's wake
			 * line, client/sync.c): forget that mapping, which stays
			 * mapped for the barrier, so that hoist_ptr asks */
			p->state = 0;
			p->base = NULL;
			int real = c->sock, real_ms = c->reply_timeout_ms;
			c->sock = sp[0];
			c->reply_timeout_ms = 500;
			IT_WHERE("hoist_ptr to rank 1 with a silent daemon");
			double t0 = it_now();
			void *q = hoist_ptr(x, 1);
			double t1 = it_now();
			char req[512];
			ssize_t got = recv(sp[1], req, sizeof(req), MSG_DONTWAIT);
			it_log("silent daemon: hoist_ptr returned %p after %.2f s, state %d, request of %zd bytes sent",
			       q, t1 - t0, p->state, got);
			if (q)
				IT_FAIL("hoist_ptr returned %p without an answer from the daemon", q);
			IT_EXPECT(p->state, -ETIMEDOUT, "peer state after the unanswered request");
			if (got <= 0)
				IT_FAIL("no PeersRequest reached the silent socket (so no wait was tested)");
			c->sock = real;
			c->reply_timeout_ms = real_ms;
			close(sp[0]);
			close(sp[1]);
			p->state = 0; /* forget the failure: ask the real daemon */
			IT_WHERE("hoist_ptr to rank 1 with the real daemon");
			uint64_t *r = hoist_ptr(x, 1);
			if (!r)
				IT_FAIL("hoist_ptr to rank 1 failed with the real daemon (state %d)", p->state);
			else if (*r != 0xfeed0001u)
				IT_FAIL("rank 1's word through hoist_ptr is %" PRIx64, *r);
		}
	}
	IT_OK(hoist_barrier());
	return it_finish();
}
