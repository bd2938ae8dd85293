/* The engine (engine.c): one client's submission ring drained, each
 * descriptor validated and executed by opcode; next the put/get stage
 * (rma.h), the strided/vector engine (multi.h), barrier, collectives, and
 * completion posting (complete.h). */
#ifndef HOISTD_ENGINE_H
#define HOISTD_ENGINE_H

struct daemon;
struct client;

/* Drain up to the batch setting's descriptors of one client. Returns how
 * many, plus 1 when a long strided/vector descriptor yielded. */
unsigned drain(struct daemon *d, struct client *c);

#endif
