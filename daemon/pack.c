/* Packed operations shared by the transports: see pack.h and wire.h. */
#include "pack.h"

#include <errno.h>
#include <string.h>

#include "daemon.h"

int pack_check(const struct wire_pack *w, const char *in, uint64_t plen, uint64_t *reply_len)
{
	uint64_t pos = 0, rlen = 0;
	if (w->reserved || w->nelem == 0 || w->nelem > plen / sizeof(struct wire_pack_elem) ||
	    plen > WIRE_AM_MAX_PAYLOAD)
		return -EPROTO;
	for (uint32_t k = 0; k < w->nelem; k++) {
		struct wire_pack_elem e;
		if (plen - pos < sizeof(e))
			return -EPROTO;
		memcpy(&e, in + pos, sizeof(e));
		pos += sizeof(e);
		if (e.reserved0 || e.reserved1 || (e.op != WIRE_PACK_PUT && e.op != WIRE_PACK_GET))
			return -EPROTO;
		if (e.op == WIRE_PACK_PUT) {
			if (plen - pos < wire_pad8(e.len))
				return -EPROTO;
			pos += wire_pad8(e.len);
			rlen += sizeof(struct wire_pack_res);
		} else {
			rlen += sizeof(struct wire_pack_res) + wire_pad8(e.len);
		}
		if (rlen > WIRE_AM_MAX_PAYLOAD)
			return -EPROTO; /* its reply could not travel as one message */
	}
	if (pos != plen)
		return -EPROTO;
	*reply_len = rlen;
	return 0;
}

uint64_t pack_execute(struct daemon *d, const struct wire_pack *w, const char *in, char *out,
		      uint64_t *ops, uint64_t *bytes)
{
	struct job *j = progress_job_find(d, w->job);
	uint64_t pos = 0, rpos = 0;
	*ops = *bytes = 0;
	for (uint32_t k = 0; k < w->nelem; k++) {
		struct wire_pack_elem e;
		memcpy(&e, in + pos, sizeof(e));
		pos += sizeof(e);
		const char *data = in + pos;
		if (e.op == WIRE_PACK_PUT)
			pos += wire_pad8(e.len);
		struct wire_pack_res r = {0};
		struct client *t = NULL;
		if (!j || e.pe < 0 || e.pe >= j->size || !(t = j->pe[e.pe]))
			r.status = -ECONNRESET; /* the PE is not (any more) here */
		else if (e.seg != HOIST_SEG_HEAP)
			r.status = -EINVAL;
		else if (!hoist_range_ok(e.off, e.len, t->heap.bytes))
			r.status = -EFAULT;
		char *at = r.status ? NULL : (char *)t->heap.base + e.off;
		if (at && e.op == WIRE_PACK_PUT) {
			memmove(at, data, e.len);
		} else if (at) {
			r.len = e.len;
			memcpy(out + rpos + sizeof(r), at, e.len);
			memset(out + rpos + sizeof(r) + e.len, 0, wire_pad8(e.len) - e.len);
		}
		if (!r.status) {
			(*ops)++;
			*bytes += e.len;
		}
		memcpy(out + rpos, &r, sizeof(r));
		rpos += sizeof(r) + wire_pad8(r.len);
	}
	return rpos;
}
