/* Where the job's identity comes from: HOIST_* or the launcher's own
 * variables (Open MPI, PMI, Slurm), first found wins. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hoist_size.h"
#include "internal.h"

/* -EINVAL, and err says which variable holds what, and what it takes. */
static int env_bad(const char *name, const char *want, char *err, size_t errlen)
{
	const char *v = getenv(name);
	snprintf(err, errlen, "%s='%.60s' is not valid: %s", name, v ? v : "", want);
	return -EINVAL;
}

/* 0: unset; 1: *out set; -EINVAL: not a whole number from 0 to 2^24. */
static int env_int(const char *name, int *out, char *err, size_t errlen)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return 0;
	char *end;
	errno = 0;
	long l = strtol(v, &end, 10);
	if (errno || *end || l < 0 || l > (1 << 24))
		return env_bad(name, "a whole number from 0 to 16777216", err, errlen);
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

int hoist__env_read(struct hoist_env *e, char *err, size_t errlen)
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
		int hr = env_int(pairs[i][0], &r, err, errlen), hs = env_int(pairs[i][1], &s, err, errlen);
		if (hr < 0 || hs < 0)
			return -EINVAL;
		if (hr && hs) {
			if (s < 1 || r >= s) {
				snprintf(err, errlen, "%s=%d is not below %s=%d", pairs[i][0], r,
					 pairs[i][1], s);
				return -EINVAL;
			}
			e->rank = r;
			e->size = s;
			break;
		}
	}

	const char *v;
	if ((v = getenv("HOIST_JOB")) && *v) {
		snprintf(e->job, sizeof(e->job), "%s", v);
		e->job_from = "HOIST_JOB";
	} else if ((v = getenv("OMPI_MCA_ess_base_jobid")) && *v) {
		snprintf(e->job, sizeof(e->job), "ompi-%s", v);
		e->job_from = "Open MPI's OMPI_MCA_ess_base_jobid";
	} else if ((v = getenv("PMIX_NAMESPACE")) && *v) {
		snprintf(e->job, sizeof(e->job), "pmix-%s", v);
		e->job_from = "PMIX_NAMESPACE";
	} else if ((v = getenv("SLURM_JOB_ID")) && *v) {
		const char *step = getenv("SLURM_STEP_ID");
		snprintf(e->job, sizeof(e->job), "slurm-%s.%s", v, step ? step : "0");
		e->job_from = "SLURM_JOB_ID.SLURM_STEP_ID";
	} else if (e->size == 1) {
		snprintf(e->job, sizeof(e->job), "pid-%d", (int)getpid());
		e->job_from = "the process id (a job of one)";
	} else { /* ranks forked by the same launcher process on this node */
		snprintf(e->job, sizeof(e->job), "ppid-%d", (int)getppid());
		e->job_from = "the parent process id: only ranks started by one process on "
			      "one node share it";
	}

	hoist__runtime_dir(e->runtime_dir, sizeof(e->runtime_dir));

	e->heap_bytes = 64ull << 20;
	if ((v = getenv("HOIST_HEAP_SIZE")) && *v && hoist_parse_size(v, &e->heap_bytes))
		return env_bad("HOIST_HEAP_SIZE", "a size: digits with an optional k, m, g or t "
						  "(powers of 1024), as in hoistd.conf", err, errlen);
	e->auto_overlap = 1;
	int a;
	int ha = env_int("HOIST_AUTO", &a, err, errlen);
	if (ha < 0 || (ha && a > 1))
		return env_bad("HOIST_AUTO", "0 or 1", err, errlen);
	if (ha)
		e->auto_overlap = a;
	int sd;
	int hsd = env_int("HOIST_SYMMETRIC_DATA", &sd, err, errlen);
	if (hsd < 0 || (hsd && sd > 1))
		return env_bad("HOIST_SYMMETRIC_DATA", "0 or 1", err, errlen);
	if (hsd)
		e->symmetric_data = sd;
	e->direct = 1;
	int dv;
	int hd = env_int("HOIST_DIRECT", &dv, err, errlen);
	if (hd < 0 || (hd && dv > 1))
		return env_bad("HOIST_DIRECT", "0 or 1", err, errlen);
	if (hd)
		e->direct = dv;
	/* how long the daemon may take to answer at all (not for the job) */
	/* generous: the daemon pins every client's segments before it
	 * answers (seconds for large heaps, more under emulation), and its
	 * control thread takes the ranks of a node one after the other */
	e->reply_timeout_ms = 60000;
	int rt;
	int hr = env_int("HOIST_ATTACH_TIMEOUT_MS", &rt, err, errlen);
	if (hr < 0 || (hr && rt < 1))
		return env_bad("HOIST_ATTACH_TIMEOUT_MS", "a whole number of milliseconds from 1", err, errlen);
	if (hr)
		e->reply_timeout_ms = rt;
	e->wait_poll_ms = 50;
	int wp;
	int hw = env_int("HOIST_WAIT_POLL_MS", &wp, err, errlen);
	if (hw < 0 || (hw && wp < 1))
		return env_bad("HOIST_WAIT_POLL_MS", "a whole number of milliseconds from 1", err, errlen);
	if (hw)
		e->wait_poll_ms = (uint32_t)wp;
	e->yield_long_us = 200;
	int yl;
	int hy = env_int("HOIST_YIELD_LONG_US", &yl, err, errlen);
	if (hy < 0)
		return -EINVAL;
	if (hy)
		e->yield_long_us = (uint32_t)yl;
	e->cpu_handoff = 1;
	int ch;
	int hc = env_int("HOIST_CPU_HANDOFF", &ch, err, errlen);
	if (hc < 0 || (hc && ch != 0 && ch != 1))
		return env_bad("HOIST_CPU_HANDOFF", "0 or 1", err, errlen);
	if (hc)
		e->cpu_handoff = ch;
	int spin;
	int hs = env_int("HOIST_SPIN_US", &spin, err, errlen);
	if (hs < 0)
		return -EINVAL;
	if (hs) {
		e->spin_us = (uint32_t)spin;
		e->spin_set = 1;
	}
	return 0;
}
