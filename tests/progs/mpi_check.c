// SPDX-License-Identifier: BSD-2-Clause
/*
 * mpi_check.c - an MPI program for t_mpi (docs/ucx.md): point-to-point,
 * allreduce and alltoall with every byte checked, over whatever UCX the
 * launcher gave it (the krcore transport). Prints one "ok: " or "FAIL: "
 * line per check on rank 0 (a rank's failure is gathered there) and
 * exits 0 only if every rank passed everything.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static unsigned char pat(int src, int dst, size_t i)
{
	return (unsigned char)(src * 31 + dst * 7 + i * 13);
}

/* Each rank sends @len bytes to the next and receives from the previous. */
static int ring(int rank, int size, size_t len)
{
	unsigned char *out = malloc(len), *in = malloc(len);
	int next = (rank + 1) % size, prev = (rank + size - 1) % size;
	int bad = 0;
	size_t i;

	if (!out || !in)
		return 1;
	for (i = 0; i < len; i++)
		out[i] = pat(rank, next, i);
	memset(in, 0, len);
	MPI_Sendrecv(out, (int)len, MPI_BYTE, next, 7, in, (int)len, MPI_BYTE,
		     prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	for (i = 0; i < len; i++)
		if (in[i] != pat(prev, rank, i))
			bad = 1;
	free(out);
	free(in);
	return bad;
}

static int allreduce(int rank, int size)
{
	enum { N = 4096 };
	int64_t *v = malloc(N * sizeof(*v)), *r = malloc(N * sizeof(*r));
	int bad = 0, i;

	if (!v || !r)
		return 1;
	for (i = 0; i < N; i++)
		v[i] = (int64_t)(rank + 1) * (i + 1);
	MPI_Allreduce(v, r, N, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	/* sum over ranks of (rank + 1) * (i + 1) */
	for (i = 0; i < N; i++)
		if (r[i] != (int64_t)size * (size + 1) / 2 * (i + 1))
			bad = 1;
	free(v);
	free(r);
	return bad;
}

static int alltoall(int rank, int size, size_t len)
{
	size_t total = len * (size_t)size, i;
	unsigned char *out, *in;
	int bad = 0, p;

	out = calloc(1, total);
	in = calloc(1, total);
	if (!out || !in) {
		free(out);
		free(in);
		return 1;
	}
	for (p = 0; p < size; p++)
		for (i = 0; i < len; i++)
			out[p * len + i] = pat(rank, p, i);
	MPI_Alltoall(out, (int)len, MPI_BYTE, in, (int)len, MPI_BYTE,
		     MPI_COMM_WORLD);
	for (p = 0; p < size; p++)
		for (i = 0; i < len; i++)
			if (in[p * len + i] != pat(p, rank, i))
				bad = 1;
	free(out);
	free(in);
	return bad;
}

static int failed;

static void report(int rank, const char *what, int bad)
{
	int any = 0;

	MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (rank == 0)
		printf("%s: %s\n", any ? "FAIL" : "ok", what);
	failed |= any;
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 8, 4000, 65536, 1 << 20 };
	char what[128];
	int rank, size;
	unsigned int i;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (rank == 0)
		printf("mpi_check: %d ranks\n", size);
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		snprintf(what, sizeof(what), "ring send/recv of %zu bytes",
			 sizes[i]);
		report(rank, what, ring(rank, size, sizes[i]));
	}
	report(rank, "allreduce of 4096 int64 sums", allreduce(rank, size));
	report(rank, "alltoall of 4000 bytes per pair",
	       alltoall(rank, size, 4000));
	report(rank, "alltoall of 65536 bytes per pair",
	       alltoall(rank, size, 65536));
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpi_check: %s\n", failed ? "FAILED" : "passed");
	MPI_Finalize();
	return failed;
}
