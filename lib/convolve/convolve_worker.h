/* convolve_worker.h: a thread that runs one backend filter's jobs behind its caller, one at a time
 * and in order, so that a long job (the split path's far tail, convolve_split.h) overlaps the short
 * runs that follow it instead of landing in one of them. Internal to the library.
 *
 * The caller owns the filter and the jobs' outputs; the worker owns a copy of each job's input.
 * Every wait blocks on a condition variable. A failure of a job is kept, with its message, and
 * reported by the next call that waits (the jobs after it still run, on the state the failure
 * left, until the caller resets). */
#ifndef CUDAFFT_CONVOLVE_WORKER_H
#define CUDAFFT_CONVOLVE_WORKER_H

#include "convolve_backend.h"

typedef struct CudafftConvolveWorker CudafftConvolveWorker;

/* Starts the thread for the filter `impl` of `ops`, whose jobs take at most max_input_bytes of
 * input. HOST_OUT_OF_MEMORY where the buffer or the thread cannot be made. */
CudafftStatus cudafft_convolve_worker_create(const CudafftConvolveBackend *ops, void *impl,
                                             size_t max_input_bytes,
                                             CudafftConvolveWorker **worker);

/* Waits for the job under way, then ends the thread (the filter stays the caller's). NULL
 * allowed. */
void cudafft_convolve_worker_destroy(CudafftConvolveWorker *worker);

/* Waits until the worker is idle, copies job->in (input_bytes of it; NULL: zeros) and starts the
 * job; job->out must stay valid until a wait has seen the job done. Returns a failure kept from an
 * earlier job, in which case nothing is started. */
CudafftStatus cudafft_convolve_worker_submit(CudafftConvolveWorker *worker,
                                             const CudafftConvolveJob *job, size_t input_bytes);

/* Waits until `count` jobs since create (or the last forget) are done; the kept failure, if any. */
CudafftStatus cudafft_convolve_worker_wait(CudafftConvolveWorker *worker, size_t count);

/* Waits until the worker is idle, then forgets its jobs and any kept failure: counts start over at
 * 0. */
void cudafft_convolve_worker_forget(CudafftConvolveWorker *worker);

#endif /* CUDAFFT_CONVOLVE_WORKER_H */
