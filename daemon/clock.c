/*
 * The daemon's clock (monotonic nanoseconds), in a file of its own: every
 * thread and transport reads it, and a file that every other one depends
 * on must depend on none (it kept the progress loop in an import cycle
 * with the transports while it lived in progress.c).
 */
#include <stdint.h>
#include <time.h>

#include "daemon.h"

uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
