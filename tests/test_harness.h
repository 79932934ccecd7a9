/* test_harness.h: how every test program begins and ends, written once. The library tests are
 * plain C programs that report each check on a line of its own (test_check); the element tests are
 * gst-check suites (element_util.h) whose runner reports through the same lines. Both take the
 * backend as their one argument and apply the same skip rule, print the same seed line and close
 * with the same report line. Exit status: 0 pass, 1 fail, 77 skip (meson's convention). Plain C. */
#ifndef CUDAFFT_TEST_HARNESS_H
#define CUDAFFT_TEST_HARNESS_H

#include "test_random.h"

#include <cudafft/common.h>

#define TEST_EXIT_SKIP 77

/* Starts a program that runs on the backend its one argument names, "cpu" or "cuda": anything
 * else is a usage error (exit 2). "cuda" where there is no usable device skips the program (77)
 * with the reason, and only then: a machine with a device runs every check. Seeds the random
 * streams and prints the lines "backend: ..." and "seed: ..." (CUDAFFT_TEST_SEED replays the
 * run). */
CudafftBackend test_begin(int argc, char **argv);
/* The same for a program that takes no argument and checks every backend the machine has. */
void test_begin_every_backend(int argc, char **argv);

/* The program's name: argv[0] without its folder. */
const char *test_program(void);
/* "auto", "cuda", "cpu" */
const char *test_backend_name(CudafftBackend backend);

/* Prints "PASS: <what>" or "FAIL: <what>" and counts it; returns ok. */
int test_check(int ok, const char *format, ...) TEST_PRINTF(2, 3);
/* Counts checks that a runner of its own reported (a gst-check suite's tests). */
void test_count(unsigned passed, unsigned failed);

/* Skips the whole program: prints "SKIP: <why>" and the report line, exits 77 (1 if a check has
 * failed already). */
_Noreturn void test_skip_program(const char *format, ...) TEST_PRINTF(1, 2);
/* Reports a broken test environment (no memory, a reference that cannot be computed) as a failed
 * check and exits 1. */
_Noreturn void test_abort(const char *format, ...) TEST_PRINTF(1, 2);

/* Prints "# <name> took <seconds> s", the time since the last such line (or the start). */
void test_section_done(const char *name);
/* Prints the report line "<program> (<backend>): P passed, F failed in T s" and returns the exit
 * status: 0 when every check passed and there was at least one (a run that checked nothing has
 * shown nothing), else 1. */
int test_finish(void);

/* Monotonic seconds. */
double test_seconds(void);

#endif
