/*
 * mpp/shmem.h - the header name of SGI's and Cray's SHMEM, which older
 * programs (and Open MPI's and Sandia OpenSHMEM's own documentation)
 * include; Open MPI and SOS install it too. It is shmem.h.
 */
#ifndef HOIST_MPP_SHMEM_H
#define HOIST_MPP_SHMEM_H
#include <shmem.h>
#endif
