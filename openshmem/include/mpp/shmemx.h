/*
 * mpp/shmemx.h - the mpp/ name of shmemx.h, for programs that include
 * mpp/shmem.h and its extensions header side by side.
 */
#ifndef HOIST_MPP_SHMEMX_H
#define HOIST_MPP_SHMEMX_H
#include <shmemx.h>
#endif
