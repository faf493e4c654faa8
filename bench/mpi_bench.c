// SPDX-License-Identifier: BSD-2-Clause
/*
 * mpi_bench - an MPI job's start-up as its ranks see it (make bench-ucx,
 * bench/ucx.sh): each rank reads CLOCK_MONOTONIC before MPI_Init, after
 * it, and after a first MPI_Alltoall of 8 bytes per pair (the first
 * traffic between every pair of ranks: pml ucx creates its endpoints
 * then). MPI_Wtime cannot time MPI_Init, hence the clock of the node.
 * Rank 0 prints the largest of each over the ranks:
 *
 *   mpi_bench: ranks=N init_max_us=... alltoall_max_us=... total_max_us=...
 *
 * (total: before MPI_Init to after the alltoall, per rank, then the max).
 * Exit status 0, or 1 if the alltoall delivered a wrong value.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <mpi.h>

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
	double t0 = now_us(), t_init, t_a2a, mine[3], most[3];
	int64_t *out, *in;
	int rank, size, i, bad = 0, all_bad = 0;

	MPI_Init(&argc, &argv);
	t_init = now_us();
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	out = malloc(sizeof(*out) * (size_t)size);
	in = malloc(sizeof(*in) * (size_t)size);
	if (!out || !in)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (i = 0; i < size; i++)
		out[i] = (int64_t)rank * 1000 + i;
	MPI_Alltoall(out, 1, MPI_INT64_T, in, 1, MPI_INT64_T, MPI_COMM_WORLD);
	t_a2a = now_us();
	for (i = 0; i < size; i++)
		if (in[i] != (int64_t)i * 1000 + rank)
			bad++;
	mine[0] = t_init - t0;
	mine[1] = t_a2a - t_init;
	mine[2] = t_a2a - t0;
	MPI_Reduce(mine, most, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Reduce(&bad, &all_bad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (!rank) {
		printf("mpi_bench: ranks=%d init_max_us=%.1f "
		       "alltoall_max_us=%.1f total_max_us=%.1f bad=%d\n",
		       size, most[0], most[1], most[2], all_bad);
		fflush(stdout);
	}
	free(out);
	free(in);
	MPI_Finalize();
	return all_bad ? 1 : 0;
}
