/* executor_test_device.h: a device table for the executor (executor_device.h) that needs no GPU,
 * for tests/test_executor.c. Its "device" memory is host memory; its streams are one queue of
 * commands (copies, kernels, completion markers) that a thread of its own runs in order, each
 * after a random delay, so that batches really are in flight while the host goes on. The test
 * steers it through `executor_test_device` (sizes, delays, a pause, injected failures) and reads
 * its counters. */
#ifndef CUDAFFT_EXECUTOR_TEST_DEVICE_H
#define CUDAFFT_EXECUTOR_TEST_DEVICE_H

#include "executor_device.h"

#include <stdatomic.h>
#include <stdint.h>

typedef struct {
  /* Read by open(): the sizes of the next executor made. */
  CudafftExecutorLimits limits;
  /* Each command waits a random 0..delay_us microseconds before it runs. */
  atomic_uint delay_us;
  /* Each upload takes launch_us microseconds on the launching thread, as a real launch's calls
   * take tens: other submitters and waiters come meanwhile. */
  atomic_uint launch_us;
  /* Device memory the allocations may take in all (the slots' buffers count too). */
  size_t memory_bytes;

  /* Slots slot_alloc may still make (each one made counts down); negative: any number. */
  atomic_int slot_budget;

  /* Injected failures, each taken by the next call (then cleared); the batch serial (count of
   * uploads or waits so far, which is the core's batch serial) it hit is recorded. */
  atomic_int fail_next_upload, fail_next_wait;
  atomic_uint_fast64_t failed_upload_batch, failed_wait_batch;

  /* Counters, over every executor made on this table. */
  atomic_uint_fast64_t uploads; /* batches uploaded (= batches launched) */
  atomic_uint_fast64_t waits;   /* batches waited for */
  /* Of those, the uploads made on the executor's launcher thread and the waits on its completion
   * thread (by their names), rather than on the submitting and waiting threads. */
  atomic_uint_fast64_t launcher_uploads, completer_waits;
  atomic_int opens, closes;           /* executors made and stopped */
  atomic_int live_slots;              /* slots allocated and not freed */
  atomic_long live_allocs;            /* allocations (state and slot buffers) not freed */
  atomic_int unfinished_waits;        /* waits that found work of the batch still queued */
  atomic_int misuse;                  /* calls out of the contract's order (must stay 0) */
  _Atomic(const char *) misuse_first; /* what the first of them was (NULL: none) */

  /* The device batch a kernel runs in: the uploads run so far (in the worker's order). */
  atomic_uint_fast64_t current_batch;
} ExecutorTestDevice;

extern ExecutorTestDevice executor_test_device;
extern const CudafftExecutorDevice executor_test_device_table;

/* Resets the controls and counters (between tests; no executor alive). */
void executor_test_device_reset(void);

/* Holds (1) or lets go (0) the worker threads of every open device: while held, queued commands
 * wait, so that batches stay in flight. */
void executor_test_device_pause(int paused);

/* What kinds do instead of a kernel launch: queues fn(args) on the stream (the device's queue);
 * args (args_bytes <= 64) is copied, as a launch copies a kernel's arguments. */
void executor_test_stream_launch(void *stream, void (*fn)(const void *args), const void *args,
                                 size_t args_bytes);

#endif
