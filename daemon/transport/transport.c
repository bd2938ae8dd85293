/*
 * What every transport shares of the interface (transport.h): refusing a
 * kind it does not run, the same way and counted once. The table of
 * transports is table.c.
 */
#include <errno.h>

#include "daemon.h"
#include "transport.h"

int xp_kind_refuse(struct daemon *d, enum xp_kind kind)
{
	STAT_INC(&d->pst, xp_kind_refused);
	switch (kind) {
	case XP_PUT:
	case XP_GET:
	case XP_AMO:
	case XP_SEND:
		return -EOPNOTSUPP; /* a kind, but not one this path runs */
	}
	return -EPROTO; /* no kind at all */
}
