/*
 * it_daemon_gone_direct: after the daemon hung up, the same-node direct
 * path stops too (driven by daemon_gone.sh KILL ... with IT_GONE_DRAINED=1).
 *
 * The hard case: the daemon consumed every descriptor before it died, so
 * nothing is left in the ring to tell the client, and the daemon could not
 * mark the job failed. PE 0 posts a barrier notify that PE 1 never joins;
 * the script waits until the daemon counted it, SIGKILLs the daemon and
 * then creates $IT_READY_FILE.killed. PE 0's barrier wait must fail with
 * -ECONNRESET, and so must its get from PE 1 afterwards, which the direct
 * path (a mapping of PE 1's heap, still valid) would otherwise serve as if
 * the job were alive. PE 1 waits for the file, then its barrier must fail.
 * IT_GONE_EARLY=1 swaps the roles: PE 1 notifies, PE 0 comes last (the
 * last PE to arrive checks the daemon, whichever rank it is).
 */
#include <sys/stat.h>

#include "it_common.h"

static void wait_for(const char *path)
{
	struct stat st;
	while (stat(path, &st) != 0)
		usleep(2000); /* the script's own watchdog bounds this */
}

int main(void)
{
	int me, n;
	it_init("it_daemon_gone_direct", &me, &n);
	if (n != 2)
		IT_FAIL("run me with 2 PEs, not %d", n);
	const char *ready = getenv("IT_READY_FILE");
	if (!ready)
		IT_FAIL("IT_READY_FILE is not set (run me from daemon_gone.sh)");
	if (it_failures)
		return 1;
	uint64_t *w = it_malloc(4096);
	uint64_t v = (uint64_t)me + 1, back = 0;
	int to = 1 - me;
	IT_OK(hoist_put(to, w, &v, sizeof(v)), "put");
	IT_OK(hoist_barrier());
	if (!hoist_ptr(w, to))
		IT_FAIL("no direct mapping of PE %d's heap: this test needs the direct path", to);
	IT_OK(hoist_get(&back, to, w, sizeof(back)), "get through the direct path");
	if (back != v) /* what this PE put there */
		IT_FAIL("get returned %" PRIu64 ", want %" PRIu64, back, v);
	IT_OK(hoist_barrier());
	char killed[4096];
	snprintf(killed, sizeof(killed), "%s.killed", ready);
	const char *e = getenv("IT_GONE_EARLY");
	int early = e && atoi(e) == 1;
	if (me == early) {
		IT_OK(hoist_barrier_notify(), "notify that the other PE never joins");
		FILE *f = fopen(ready, "w");
		if (f)
			fclose(f);
		IT_WHERE("barrier wait while the daemon is killed");
		IT_EXPECT(hoist_barrier_wait(), -ECONNRESET, "barrier wait after the daemon died");
		IT_WHERE("get after the daemon died, every descriptor consumed");
		back = 0;
		IT_EXPECT(hoist_get(&back, to, w, sizeof(back)), -ECONNRESET,
			  "get after the daemon died (the direct path must not serve it)");
	} else {
		IT_WHERE("waiting for the daemon to be killed");
		wait_for(killed);
		IT_EXPECT(hoist_barrier(), -ECONNRESET, "barrier after the daemon died");
	}
	int rc = hoist_finalize();
	if (rc != 0 && rc != -ECONNRESET)
		IT_FAIL("hoist_finalize returned %s, expected 0 or -ECONNRESET", it_errname(rc));
	if (it_failures)
		return 1;
	if (me == early)
		fprintf(stderr, "[it_daemon_gone_direct rank %d] PASS\n", me);
	return 0;
}
