/* streams.cuh: the streams a CUDA backend object queues its work on, and the events that order
 * them: made together, waited for together, released together. Internal to the library; for .cu
 * files only. */
#ifndef CUDAFFT_STREAMS_CUH
#define CUDAFFT_STREAMS_CUH

#include <cuda_runtime.h>

#include <initializer_list>

/* Makes each stream non-blocking: the legacy default stream, which the caller's own work may be
 * on, does not wait for them nor they for it. */
static inline cudaError_t
cudafft_streams_create(std::initializer_list<cudaStream_t *> streams)
{
  for (cudaStream_t *stream : streams) {
    const cudaError_t error = cudaStreamCreateWithFlags(stream, cudaStreamNonBlocking);
    if (error != cudaSuccess)
      return error;
  }
  return cudaSuccess;
}

/* Waits for the work queued on each stream (null ones skipped), best effort, then clears any error
 * so that the caller's next CUDA call is not blamed for it: for releasing an object, and for
 * recovering from a failure, after which nothing may still run on the object's buffers or the
 * caller's. */
static inline void
cudafft_streams_settle(std::initializer_list<cudaStream_t> streams)
{
  for (cudaStream_t stream : streams)
    if (stream)
      cudaStreamSynchronize(stream);
  cudaGetLastError();
}

/* Destroys each stream (null ones skipped); the caller has settled them. */
static inline void
cudafft_streams_destroy(std::initializer_list<cudaStream_t> streams)
{
  for (cudaStream_t stream : streams)
    if (stream)
      cudaStreamDestroy(stream);
}

/* Makes each event without timing: they only order work and wake waiting threads. */
static inline cudaError_t
cudafft_events_create(std::initializer_list<cudaEvent_t *> events)
{
  for (cudaEvent_t *event : events) {
    const cudaError_t error = cudaEventCreateWithFlags(event, cudaEventDisableTiming);
    if (error != cudaSuccess)
      return error;
  }
  return cudaSuccess;
}

/* Destroys each event (null ones skipped). */
static inline void
cudafft_events_destroy(std::initializer_list<cudaEvent_t> events)
{
  for (cudaEvent_t event : events)
    if (event)
      cudaEventDestroy(event);
}

#endif
