/*
 * it_daemon_gone: the daemon disappears under a running job (driven by
 * daemon_gone.sh, which owns that daemon and stops it with SIGTERM or
 * SIGKILL once $IT_READY_FILE exists). Every PE must notice within bounded
 * time instead of hanging: its barriers fail with -ECONNRESET, a get fails
 * with -ECONNRESET, a put returns 0 or -ECONNRESET, and hoist_finalize
 * returns.
 */
#include "it_common.h"

int main(void)
{
	int me, n;
	it_init("it_daemon_gone", &me, &n);
	it_watchdog(40);
	uint64_t *w = it_malloc(4096);
	uint64_t v = (uint64_t)me + 1, back = 0;
	int to = (me + 1) % n;
	IT_OK(hoist_put(to, w, &v, sizeof(v)), "put");
	IT_OK(hoist_barrier());
	IT_OK(hoist_get(&back, to, w, sizeof(back)), "get");
	if (back != v)
		IT_FAIL("get returned %" PRIu64 ", want %" PRIu64, back, v);
	IT_OK(hoist_barrier());
	const char *ready = getenv("IT_READY_FILE");
	if (me == 0 && ready) {
		FILE *f = fopen(ready, "w");
		if (f)
			fclose(f);
	}
	IT_WHERE("barriers while the daemon goes away");
	/* barriers until the daemon is gone */
	int rc = 0, rounds = 0;
	double t0 = it_now();
	while (it_now() - t0 < 30) {
		rc = hoist_barrier();
		if (rc)
			break;
		rounds++;
		usleep(2000);
	}
	if (rc != -ECONNRESET)
		IT_FAIL("barrier after the daemon went away returned %s, expected -ECONNRESET", it_errname(rc));
	IT_WHERE("get/put/barrier/finalize after the daemon went away");
	rc = hoist_get(&back, to, w, sizeof(back));
	if (rc != -ECONNRESET)
		IT_FAIL("get after the daemon went away returned %s, expected -ECONNRESET", it_errname(rc));
	rc = hoist_put(to, w, &v, sizeof(v));
	if (rc != 0 && rc != -ECONNRESET)
		IT_FAIL("put after the daemon went away returned %s, expected 0 or -ECONNRESET", it_errname(rc));
	IT_EXPECT(hoist_barrier(), -ECONNRESET, "second barrier after the daemon went away");
	rc = hoist_finalize();
	it_log("%d barriers before the daemon vanished; finalize returned %s", rounds, it_errname(rc));
	if (rc != 0 && rc != -ECONNRESET)
		IT_FAIL("hoist_finalize returned %s, expected 0 or -ECONNRESET", it_errname(rc));
	if (it_failures)
		return 1;
	if (me == 0)
		fprintf(stderr, "[it_daemon_gone rank 0] PASS\n");
	return 0;
}
