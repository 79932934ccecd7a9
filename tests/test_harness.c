/* test_harness.c: see test_harness.h. */
#define _POSIX_C_SOURCE 200809L

#include "test_harness.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *program = "test";
static const char *run_backend = "";
static unsigned passed, failed;
static double start_time, section_time;

double
test_seconds(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

const char *
test_program(void)
{
  return program;
}

const char *
test_backend_name(CudafftBackend backend)
{
  switch (backend) {
  case CUDAFFT_BACKEND_AUTO:
    return "auto";
  case CUDAFFT_BACKEND_CUDA:
    return "cuda";
  case CUDAFFT_BACKEND_CPU:
    return "cpu";
  }
  return "(invalid backend)";
}

/* Whether a usable CUDA device is present, asked in a child process: gst-check forks every test
 * (CK_FORK=yes, its default), and a process that has initialised the CUDA runtime cannot use it in
 * a forked child, so the process that forks must not touch CUDA itself. */
static int
cuda_device_present(void)
{
  fflush(NULL);
  const pid_t pid = fork();
  if (pid < 0)
    return cudafft_cuda_device_count() > 0; /* cannot fork: gst-check cannot either */
  if (pid == 0)
    _exit(cudafft_cuda_device_count() > 0 ? 0 : 1);
  int status = 0;
  if (waitpid(pid, &status, 0) != pid)
    return 0;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void
begin(char **argv, const char *backend)
{
  const char *slash = argv[0] ? strrchr(argv[0], '/') : NULL;
  program = slash ? slash + 1 : argv[0] ? argv[0] : "test";
  run_backend = backend;
  start_time = section_time = test_seconds();
}

/* After the skip rule: a skipped program prints neither line. */
static void
print_start_lines(void)
{
  const uint64_t seed = test_random_init();
  printf("backend: %s\nseed: 0x%016" PRIx64 " (CUDAFFT_TEST_SEED=0x%016" PRIx64
         " reproduces this run)\n",
         run_backend, seed, seed);
  fflush(stdout);
}

CudafftBackend
test_begin(int argc, char **argv)
{
  const char *name = argc == 2 ? argv[1] : "";
  const int cpu = strcmp(name, "cpu") == 0, cuda = strcmp(name, "cuda") == 0;
  if (!cpu && !cuda) {
    fprintf(stderr, "usage: %s cpu|cuda\n", argv[0]);
    exit(2);
  }
  begin(argv, cpu ? "cpu" : "cuda");
  if (cuda && !cuda_device_present())
    /* Every check of the program runs on the CUDA backend: with no device all of them would be
     * skipped, which is the program's skip. */
    test_skip_program("no CUDA device (cudafft_cuda_device_count() == 0): %s",
                      cudafft_has_cuda_backend()
                          ? "the CUDA backend is built in but finds no usable device or driver"
                          : "this build has no CUDA backend (configured without nvcc)");
  print_start_lines();
  return cpu ? CUDAFFT_BACKEND_CPU : CUDAFFT_BACKEND_CUDA;
}

void
test_begin_every_backend(int argc, char **argv)
{
  if (argc != 1) {
    fprintf(stderr, "usage: %s (no arguments: it checks every backend there is)\n", argv[0]);
    exit(2);
  }
  begin(argv, "cpu and cuda where there is a device");
  print_start_lines();
}

int
test_check(int ok, const char *format, ...)
{
  va_list args;
  va_start(args, format);
  fputs(ok ? "PASS: " : "FAIL: ", stdout);
  vprintf(format, args);
  va_end(args);
  putchar('\n');
  /* meson reads stdout through a pipe: without the flush a crash would eat the last lines. */
  fflush(stdout);
  if (ok)
    passed++;
  else
    failed++;
  return ok;
}

void
test_count(unsigned more_passed, unsigned more_failed)
{
  passed += more_passed;
  failed += more_failed;
}

static void
print_report(const char *end)
{
  printf("%s (%s): %u passed, %u failed%s in %.2f s\n", program, run_backend, passed, failed, end,
         test_seconds() - start_time);
  fflush(stdout);
}

void
test_skip_program(const char *format, ...)
{
  va_list args;
  va_start(args, format);
  fputs("SKIP: ", stdout);
  vprintf(format, args);
  va_end(args);
  putchar('\n');
  print_report(", skipped");
  exit(failed ? 1 : TEST_EXIT_SKIP);
}

void
test_abort(const char *format, ...)
{
  va_list args;
  va_start(args, format);
  fputs("FAIL: ", stdout);
  vprintf(format, args);
  va_end(args);
  putchar('\n');
  failed++;
  print_report(", aborted");
  exit(1);
}

void
test_section_done(const char *name)
{
  const double now = test_seconds();
  printf("# %s took %.2f s\n", name, now - section_time);
  fflush(stdout);
  section_time = now;
}

int
test_finish(void)
{
  print_report("");
  return failed == 0 && passed > 0 ? 0 : 1;
}
