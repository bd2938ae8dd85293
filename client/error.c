#include <errno.h>
#include <string.h>

#include "internal.h"

HOIST_API const char *hoist_strerror(int err)
{
	switch (err) {
	case 0: return "success";
	case -ENOTCONN: return "hoist is not initialized (call hoist_init first)";
	case -EINVAL: return "invalid argument (e.g. PE outside the job)";
	case -EFAULT: return "address range is not inside the symmetric heap";
	case -ENOMEM: return "out of memory (symmetric heap or staging)";
	case -ETIMEDOUT: return "timed out: not every rank of the job attached in time, or hoistd did not answer (see hoist_error_detail)";
	case -EACCES: return "permission denied: this hoistd or its socket is not open to your user (see hoist_error_detail)";
	case -EPERM: return "not your hoistd: the runtime directory, its socket or the daemon belongs to another user (see hoist_error_detail)";
	case -EADDRINUSE: return "this rank of the job is already attached, or the job is running";
	case -ECONNRESET: return "hoistd or a PE this operation needs went away";
	case -EPROTO: return "hoistd and libhoist speak different protocol versions";
	case -ENOENT: return "no hoistd is listening in the runtime directory (HOIST_RUNTIME_DIR)";
	case -EUSERS: return "hoistd serves its maximum number of clients";
	}
	if (err < 0 && err > -4096) { /* errno range; also keeps -INT_MIN away */
		const char *d = strerrordesc_np(-err);
		if (d)
			return d;
	}
	return "unknown error";
}
