/* Where the job's identity comes from: HOIST_* or the launcher's own
 * variables (Open MPI, PMI, Slurm), first found wins. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

static int env_int(const char *name, int *out)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return 0;
	char *end;
	errno = 0;
	long l = strtol(v, &end, 10);
	if (errno || *end || l < 0 || l > (1 << 24))
		return -EINVAL;
	*out = (int)l;
	return 1;
}

/* HOIST_RUNTIME_DIR, else the per-user daemon's directory if one runs
 * there, else the node's system daemon in /run/hoist. */
int hoist__runtime_dir(char *buf, size_t len)
{
	const char *env = getenv("HOIST_RUNTIME_DIR");
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char sock[300];
	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return 0;
	}
	if (getuid() != 0) {
		if (xdg && *xdg)
			snprintf(buf, len, "%s/hoist", xdg);
		else
			snprintf(buf, len, "/tmp/hoist-%u", (unsigned)getuid());
		snprintf(sock, sizeof(sock), "%s/hoistd.sock", buf);
		if (access(sock, F_OK) == 0)
			return 0;
	}
	snprintf(buf, len, "/run/hoist");
	return 0;
}

static int parse_size(const char *text, uint64_t *out)
{
	char *end;
	errno = 0;
	if (!text || !*text || *text == '-')
		return -EINVAL;
	unsigned long long v = strtoull(text, &end, 10);
	if (errno || end == text)
		return -EINVAL;
	unsigned shift = 0;
	switch (*end) {
	case 0: break;
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	default: return -EINVAL;
	}
	if (*end || (shift && v > (~0ull >> shift)))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

int hoist__env_read(struct hoist_env *e)
{
	static const char *const pairs[][2] = {
		{"HOIST_RANK", "HOIST_SIZE"},
		{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
		{"PMI_RANK", "PMI_SIZE"},
		{"SLURM_PROCID", "SLURM_NTASKS"},
	};
	memset(e, 0, sizeof(*e));
	e->rank = 0;
	e->size = 1; /* a program started by hand is a job of one */
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		int r, s;
		int hr = env_int(pairs[i][0], &r), hs = env_int(pairs[i][1], &s);
		if (hr < 0 || hs < 0)
			return -EINVAL;
		if (hr && hs) {
			if (s < 1 || r >= s)
				return -EINVAL;
			e->rank = r;
			e->size = s;
			break;
		}
	}

	const char *v;
	if ((v = getenv("HOIST_JOB")) && *v)
		snprintf(e->job, sizeof(e->job), "%s", v);
	else if ((v = getenv("OMPI_MCA_ess_base_jobid")) && *v)
		snprintf(e->job, sizeof(e->job), "ompi-%s", v);
	else if ((v = getenv("PMIX_NAMESPACE")) && *v)
		snprintf(e->job, sizeof(e->job), "pmix-%s", v);
	else if ((v = getenv("SLURM_JOB_ID")) && *v) {
		const char *step = getenv("SLURM_STEP_ID");
		snprintf(e->job, sizeof(e->job), "slurm-%s.%s", v, step ? step : "0");
	} else if (e->size == 1)
		snprintf(e->job, sizeof(e->job), "pid-%d", (int)getpid());
	else /* ranks forked by the same launcher process on this node */
		snprintf(e->job, sizeof(e->job), "ppid-%d", (int)getppid());

	hoist__runtime_dir(e->runtime_dir, sizeof(e->runtime_dir));

	e->heap_bytes = 64ull << 20;
	if ((v = getenv("HOIST_HEAP_SIZE")) && *v && parse_size(v, &e->heap_bytes))
		return -EINVAL;
	e->auto_overlap = 1;
	int a;
	int ha = env_int("HOIST_AUTO", &a);
	if (ha < 0 || (ha && a > 1))
		return -EINVAL;
	if (ha)
		e->auto_overlap = a;
	e->direct = 1;
	int dv;
	int hd = env_int("HOIST_DIRECT", &dv);
	if (hd < 0 || (hd && dv > 1))
		return -EINVAL;
	if (hd)
		e->direct = dv;
	/* how long the daemon may take to answer at all (not for the job) */
	e->reply_timeout_ms = 10000;
	int rt;
	int hr = env_int("HOIST_ATTACH_TIMEOUT_MS", &rt);
	if (hr < 0 || (hr && rt < 1))
		return -EINVAL;
	if (hr)
		e->reply_timeout_ms = rt;
	int spin;
	int hs = env_int("HOIST_SPIN_US", &spin);
	if (hs < 0)
		return -EINVAL;
	if (hs) {
		e->spin_us = (uint32_t)spin;
		e->spin_set = 1;
	}
	return 0;
}
