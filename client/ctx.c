/*
 * The library's one context and the accessors that only read it. Below
 * everything else of the client (see ring.h for the layering): every file
 * reaches hoist__g from here, none of them has to call attach.c for it.
 */
#include <errno.h>

#include "internal.h"

struct hoist_ctx hoist__g;

HOIST_API struct hoist_ctx *hoist__ctx(void)
{
	return hoist__g.initialized ? &hoist__g : NULL;
}

HOIST_API int hoist_rank(void)
{
	return hoist__g.initialized ? hoist__g.rank : -ENOTCONN;
}

HOIST_API int hoist_size(void)
{
	return hoist__g.initialized ? hoist__g.size : -ENOTCONN;
}

HOIST_API int hoist_is_symmetric(const void *ptr, size_t n)
{
	struct hoist_ctx *c = &hoist__g;
	uint64_t off;
	return c->initialized && hoist__sym_off(c, ptr, n, &off) == 0;
}
