/* An MPI program that knows nothing of gdrcoll: it runs the collectives the
 * PMPI layer intercepts (and a few it does not) on MPI_COMM_WORLD, a
 * duplicate and a split, checks every result against values it computes
 * itself, and prints a digest of all results. run_pmpi_test.sh runs it with
 * and without libgdrcoll_mpi.so preloaded and compares the digests.
 *
 * PMPI_PROG_DEVICE=1 (GPU machine, with the layer preloaded): buffers of the
 * types gdrcoll takes live in device memory (libcudart is loaded at run
 * time, so the program builds without CUDA); the others stay on the host
 * and go to MPI, which need not be CUDA-aware. Results are copied back and
 * digested exactly as in a host run, so the digests compare across runs.
 *
 *   pmpi_prog <seed> */
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long long seed;
static int errors;
static uint64_t digest = 1469598103934665603ull;

static void absorb(const void* p, size_t n) {
  const unsigned char* b = (const unsigned char*)p;
  for (size_t i = 0; i < n; ++i) digest = (digest ^ b[i]) * 1099511628211ull;
}

/* Rank r's element i: small integers, exact in every type after any op. */
static double input(int r, size_t i, MPI_Op op) {
  uint64_t h = (seed ^ ((uint64_t)r * 0x9e3779b97f4a7c15ull)) + i * 0xbf58476d1ce4e5b9ull;
  h ^= h >> 31;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 29;
  return op == MPI_PROD ? (double)(1 + h % 2) : (double)(h % 15);
}

static double combine(double a, double b, MPI_Op op) {
  if (op == MPI_PROD) return a * b;
  if (op == MPI_MAX) return a > b ? a : b;
  if (op == MPI_MIN) return a < b ? a : b;
  return a + b;
}

static double reduced(int n, size_t i, MPI_Op op) {
  double v = input(0, i, op);
  for (int r = 1; r < n; ++r) v = combine(v, input(r, i, op), op);
  return v;
}

static size_t sizeOf(MPI_Datatype t) {
  int s;
  MPI_Type_size(t, &s);
  return (size_t)s;
}
static void put(void* b, size_t i, MPI_Datatype t, double v) {
  if (t == MPI_INT) ((int*)b)[i] = (int)v;
  else if (t == MPI_FLOAT) ((float*)b)[i] = (float)v;
  else if (t == MPI_DOUBLE) ((double*)b)[i] = v;
  else if (t == MPI_LONG_LONG) ((long long*)b)[i] = (long long)v;
  else if (t == MPI_UNSIGNED_CHAR) ((unsigned char*)b)[i] = (unsigned char)v;
  else ((short*)b)[i] = (short)v;
}
static double get(const void* b, size_t i, MPI_Datatype t) {
  if (t == MPI_INT) return ((const int*)b)[i];
  if (t == MPI_FLOAT) return ((const float*)b)[i];
  if (t == MPI_DOUBLE) return ((const double*)b)[i];
  if (t == MPI_LONG_LONG) return (double)((const long long*)b)[i];
  if (t == MPI_UNSIGNED_CHAR) return ((const unsigned char*)b)[i];
  return ((const short*)b)[i];
}

#define EXPECT(cond, ...)                         \
  do {                                            \
    if (!(cond)) {                                \
      if (errors++ < 10) {                        \
        fprintf(stderr, "rank %d: ", rank);       \
        fprintf(stderr, __VA_ARGS__);             \
        fprintf(stderr, "\n");                    \
      }                                           \
    }                                             \
  } while (0)

/* ---- device buffers through libcudart, loaded at run time ---- */
static int onDevice;
static int (*cuMalloc)(void**, size_t);
static int (*cuFree)(void*);
static int (*cuMemcpy)(void*, const void*, size_t, int);  /* cudaMemcpyDefault = 4 */
static int (*cuSetDevice)(int);
static int (*cuGetDeviceCount)(int*);

static void loadCuda(int worldRank) {
  const char* want = getenv("PMPI_PROG_DEVICE");
  if (!want || strcmp(want, "1") != 0) return;
  void* h = dlopen("libcudart.so", RTLD_NOW);
  if (!h) h = dlopen("libcudart.so.13", RTLD_NOW);
  if (!h) h = dlopen("libcudart.so.12", RTLD_NOW);
  if (!h) {
    fprintf(stderr, "PMPI_PROG_DEVICE=1 but libcudart cannot be loaded: %s\n", dlerror());
    exit(2);
  }
  cuMalloc = (int (*)(void**, size_t))dlsym(h, "cudaMalloc");
  cuFree = (int (*)(void*))dlsym(h, "cudaFree");
  cuMemcpy = (int (*)(void*, const void*, size_t, int))dlsym(h, "cudaMemcpy");
  cuSetDevice = (int (*)(int))dlsym(h, "cudaSetDevice");
  cuGetDeviceCount = (int (*)(int*))dlsym(h, "cudaGetDeviceCount");
  int ndev = 0;
  if (!cuMalloc || !cuFree || !cuMemcpy || !cuSetDevice || !cuGetDeviceCount || cuGetDeviceCount(&ndev) != 0 ||
      ndev == 0 || cuSetDevice(worldRank % ndev) != 0) {
    fprintf(stderr, "PMPI_PROG_DEVICE=1 but no usable CUDA device\n");
    exit(2);
  }
  onDevice = 1;
}

/* The buffer a call gets: a device copy of `host` in device mode for types
 * gdrcoll takes, else `host` itself. */
static char* callBuf(char* host, size_t bytes, MPI_Datatype t) {
  if (!onDevice || t == MPI_SHORT) return host;
  void* d = NULL;
  if (cuMalloc(&d, bytes ? bytes : 1) != 0 || cuMemcpy(d, host, bytes ? bytes : 1, 4) != 0) {
    fprintf(stderr, "cudaMalloc/cudaMemcpy failed\n");
    exit(2);
  }
  return (char*)d;
}
/* Copies a call's buffer back into `host` (when it is a device copy) and frees it. */
static void backTo(char* host, char* buf, size_t bytes) {
  if (buf == host) return;
  if (cuMemcpy(host, buf, bytes ? bytes : 1, 4) != 0) {
    fprintf(stderr, "cudaMemcpy back failed\n");
    exit(2);
  }
  cuFree(buf);
}

static void* poisoned(size_t bytes) {
  void* p = malloc(bytes ? bytes : 1);
  memset(p, 0xa5, bytes ? bytes : 1);
  return p;
}

static void run(MPI_Comm comm, const char* name) {
  int rank, n;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &n);
  const MPI_Datatype types[] = {MPI_INT, MPI_FLOAT, MPI_DOUBLE, MPI_LONG_LONG, MPI_UNSIGNED_CHAR,
                                MPI_SHORT /* no gdrcoll twin: stays with MPI */};
  const MPI_Op ops[] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN};
  const size_t counts[] = {0, 1, 17, 5000};
  const int root = (int)(seed % (unsigned)n);
  for (int ti = 0; ti < 6; ++ti)
    for (int ci = 0; ci < 4; ++ci) {
      MPI_Datatype t = types[ti];
      size_t count = counts[ci], es = sizeOf(t);
      for (int oi = 0; oi < 4; ++oi)
        for (int ip = 0; ip < 2; ++ip) {
          MPI_Op op = ops[oi];
          if (op == MPI_PROD && t == MPI_UNSIGNED_CHAR && n > 7) continue;
          char* s = poisoned(count * es);
          char* r = poisoned(count * es);
          for (size_t i = 0; i < count; ++i) put(ip ? r : s, i, t, input(rank, i, op));
          char *ds = callBuf(s, count * es, t), *dr = callBuf(r, count * es, t);
          MPI_Allreduce(ip ? MPI_IN_PLACE : ds, dr, (int)count, t, op, comm);
          backTo(s, ds, count * es);
          backTo(r, dr, count * es);
          for (size_t i = 0; i < count; ++i)
            EXPECT(get(r, i, t) == reduced(n, i, op), "%s allreduce type %d op %d n %zu ip %d [%zu] %g != %g", name,
                   ti, oi, count, ip, i, get(r, i, t), reduced(n, i, op));
          absorb(r, count * es);
          /* reduce to root, in place at the root */
          memset(r, 0xa5, count * es ? count * es : 1);
          for (size_t i = 0; i < count; ++i) put(ip && rank == root ? r : s, i, t, input(rank, i, op));
          ds = callBuf(s, count * es, t);
          dr = callBuf(r, count * es, t);
          MPI_Reduce(ip && rank == root ? MPI_IN_PLACE : ds, dr, (int)count, t, op, root, comm);
          backTo(s, ds, count * es);
          backTo(r, dr, count * es);
          if (rank == root) {
            for (size_t i = 0; i < count; ++i)
              EXPECT(get(r, i, t) == reduced(n, i, op), "%s reduce type %d op %d [%zu]", name, ti, oi, i);
            absorb(r, count * es);
          }
          free(s);
          free(r);
        }
      /* bcast */
      char* b = poisoned(count * es);
      for (size_t i = 0; i < count; ++i) put(b, i, t, rank == root ? input(root, i, MPI_SUM) : 99);
      char* db = callBuf(b, count * es, t);
      MPI_Bcast(db, (int)count, t, root, comm);
      backTo(b, db, count * es);
      for (size_t i = 0; i < count; ++i) EXPECT(get(b, i, t) == input(root, i, MPI_SUM), "%s bcast [%zu]", name, i);
      absorb(b, count * es);
      free(b);
      /* allgather, reduce_scatter_block, alltoall; out of place and in place */
      for (int ip = 0; ip < 2; ++ip) {
        char* s = poisoned(count * es * n);
        char* all = poisoned(count * es * n);
        for (size_t i = 0; i < count; ++i) put(ip ? all + rank * count * es : s, i, t, input(rank, i, MPI_SUM));
        char *ds = callBuf(s, count * es * n, t), *dall = callBuf(all, count * es * n, t);
        MPI_Allgather(ip ? MPI_IN_PLACE : ds, (int)count, t, dall, (int)count, t, comm);
        backTo(s, ds, count * es * n);
        backTo(all, dall, count * es * n);
        for (int p = 0; p < n; ++p)
          for (size_t i = 0; i < count; ++i)
            EXPECT(get(all, p * count + i, t) == input(p, i, MPI_SUM), "%s allgather ip %d", name, ip);
        absorb(all, count * es * n);
        for (size_t i = 0; i < count * n; ++i) put(ip ? all : s, i, t, input(rank, i, MPI_SUM));
        char* r = poisoned(count * es);
        ds = callBuf(s, count * es * n, t);
        dall = callBuf(all, count * es * n, t);
        char* dr = callBuf(r, count * es, t);
        MPI_Reduce_scatter_block(ip ? MPI_IN_PLACE : ds, ip ? dall : dr, (int)count, t, MPI_SUM, comm);
        backTo(s, ds, count * es * n);
        backTo(all, dall, count * es * n);
        backTo(r, dr, count * es);
        for (size_t i = 0; i < count; ++i)
          EXPECT(get(ip ? all : r, i, t) == reduced(n, rank * count + i, MPI_SUM), "%s reduce_scatter_block ip %d [%zu]",
                 name, ip, i);
        absorb(ip ? all : r, count * es);
        if (!ip) {
          for (size_t i = 0; i < count * n; ++i) put(s, i, t, input(rank, i, MPI_SUM));
          ds = callBuf(s, count * es * n, t);
          dall = callBuf(all, count * es * n, t);
          MPI_Alltoall(ds, (int)count, t, dall, (int)count, t, comm);
          backTo(s, ds, count * es * n);
          backTo(all, dall, count * es * n);
          for (int p = 0; p < n; ++p)
            for (size_t i = 0; i < count; ++i)
              EXPECT(get(all, p * count + i, t) == input(p, rank * count + i, MPI_SUM), "%s alltoall from %d", name, p);
          absorb(all, count * es * n);
        }
        free(s);
        free(all);
        free(r);
      }
    }
  MPI_Barrier(comm);
  /* calls the layer does not take: MPI_Scan, MPI_MAXLOC, MPI_Sendrecv */
  int mine = rank + 1, prefix = 0;
  MPI_Scan(&mine, &prefix, 1, MPI_INT, MPI_SUM, comm);
  EXPECT(prefix == (rank + 1) * (rank + 2) / 2, "%s scan %d", name, prefix);
  struct { int v, r; } in = {rank % 3, rank}, out;
  MPI_Allreduce(&in, &out, 1, MPI_2INT, MPI_MAXLOC, comm);
  EXPECT(out.v == (n > 2 ? 2 : n - 1), "%s maxloc %d", name, out.v);
  int from = -1;
  MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % n, 7, &from, 1, MPI_INT, (rank + n - 1) % n, 7, comm, MPI_STATUS_IGNORE);
  EXPECT(from == (rank + n - 1) % n, "%s sendrecv %d", name, from);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  seed = argc > 1 ? strtoull(argv[1], NULL, 10) : 12345;
  loadCuda(rank);
  run(MPI_COMM_WORLD, "world");
  MPI_Comm dup, half;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  run(dup, "dup");
  MPI_Comm_free(&dup);
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, n - rank, &half);
  run(half, "split");
  MPI_Comm_free(&half);
  /* a communicator created and freed repeatedly */
  for (int i = 0; i < 3; ++i) {
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    int one = 1, sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, dup);
    EXPECT(sum == n, "dup %d allreduce %d", i, sum);
    MPI_Comm_free(&dup);
  }
  int allErrors = 0;
  MPI_Allreduce(&errors, &allErrors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  unsigned long long d = digest, *ds = rank == 0 ? malloc(sizeof(d) * n) : NULL;
  MPI_Gather(&d, 1, MPI_UNSIGNED_LONG_LONG, ds, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    for (int r = 0; r < n; ++r) printf("digest %d %016llx\n", r, ds[r]);
    printf("errors %d\n", allErrors);
    free(ds);
  }
  MPI_Finalize();
  return allErrors ? 1 : 0;
}
