/* bench_common.c: see bench_common.h. */
#define _GNU_SOURCE /* sched_getaffinity: the threads nproc counts */
#include "bench_common.h"

#include <cudafft/common.h>

#ifdef BENCH_COMMON_CUDART
#include <cuda_runtime_api.h>
#endif

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int
bench_compare_doubles(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double
bench_median(double *values, int n)
{
  qsort(values, n, sizeof(double), bench_compare_doubles);
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

int
bench_host_threads(void)
{
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
    return CPU_COUNT(&set);
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? (int)online : 1;
}

/* The first "model name" of /proc/cpuinfo into model (size bytes); FALSE where there is none. */
static int
cpu_model(char *model, size_t size)
{
  FILE *f = fopen("/proc/cpuinfo", "r");
  char line[512];
  int found = 0;
  while (f && !found && fgets(line, sizeof line, f)) {
    const char *colon = strchr(line, ':');
    if (strncmp(line, "model name", 10) != 0 || !colon)
      continue;
    snprintf(model, size, "%s", colon + 1 + (colon[1] == ' '));
    model[strcspn(model, "\n")] = '\0';
    found = 1;
  }
  if (f)
    fclose(f);
  return found;
}

void
bench_print_host(const char *cuda_part, const char *software)
{
  const int devices = cudafft_cuda_device_count();
  if (devices == 0)
    printf("device: no CUDA device (%s is skipped)\n", cuda_part);
  for (int d = 0; d < devices; d++) {
#ifdef BENCH_COMMON_CUDART
    struct cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, d) == cudaSuccess) {
      printf("device %d: %s (sm_%d%d, %d SMs)\n", d, prop.name, prop.major, prop.minor,
             prop.multiProcessorCount);
      continue;
    }
#endif
    printf("device %d\n", d);
  }
  /* the element benchmarks pin their elements (cuda-device-id=0); streams-bench and latency-bench
   * spread theirs as --devices says and print each device's load after each row */
  if (devices > 1)
    printf("devices used: 0 for pinned rows (cuda-device-id=0); rows spread over devices say so "
           "with each device's load\n");
  char model[256];
  printf("host: %s, %d threads%s%s\n", cpu_model(model, sizeof model) ? model : "unknown CPU",
         bench_host_threads(), software ? "; " : "", software ? software : "");
}

void
bench_format_device_load(char *text, size_t size)
{
  size_t used = 0;
  text[0] = '\0';
  for (int d = 0; d < cudafft_cuda_device_count() && used < size; d++) {
    unsigned objects = 0;
    size_t bytes = 0;
    if (cudafft_cuda_device_load(d, &objects, &bytes) == CUDAFFT_STATUS_OK)
      used += (size_t)snprintf(text + used, size - used, "%s%d: %u objects, %.2f GB", d ? "; " : "",
                               d, objects, (double)bytes / 1e9);
  }
}
