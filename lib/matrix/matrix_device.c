/* matrix_device.c: the matrix convolution's samples in device memory (cudafft_matrix_push_device,
 * cudafft_matrix_drain_device): the calls' checks, the partial block staged where its frames came,
 * and the copies to and from host memory; matrix.c's pushes and drains use them (matrix_front.h).
 * The CUDA backend reads and writes whole blocks in device memory itself (matrix_cuda.cu). */
#include "matrix_front.h"

#include "device_samples.h"
#include "errors.h"

#include <stdlib.h>
#include <string.h>

CudafftStatus
matrix_device_check(CudafftMatrix *mx, unsigned on_device, const void *in, size_t in_bytes,
                    const void *out, size_t out_bytes, const CudafftFence *after, const char *name)
{
  CudafftStatus status = cudafft_device_samples_check_flags(on_device, mx->backend, name);
  if (status == CUDAFFT_STATUS_OK && on_device)
    status = cudafft_device_pointers_check(&mx->checked, mx->device_id, on_device, in, in_bytes,
                                           out, out_bytes, name);
  if (status == CUDAFFT_STATUS_OK && after)
    status = cudafft_fence_wait(*after);
  return status;
}

CudafftStatus
matrix_move_stage(CudafftMatrix *mx, size_t staged, int to_device)
{
  if (to_device == mx->stage_on_device)
    return CUDAFFT_STATUS_OK;
  CudafftStatus status = CUDAFFT_STATUS_OK;
  if (to_device && !mx->stage_device)
    status =
        cudafft_device_samples_alloc(mx->device_id, mx->unit * mx->in_frame, &mx->stage_device);
  if (status == CUDAFFT_STATUS_OK && staged > 0)
    status = cudafft_device_samples_copy(mx->device_id, to_device ? mx->stage_device : mx->stage,
                                         to_device ? mx->stage : mx->stage_device,
                                         staged * mx->in_frame);
  if (status == CUDAFFT_STATUS_OK)
    mx->stage_on_device = to_device;
  return status;
}

CudafftStatus
matrix_stage_frames(CudafftMatrix *mx, size_t staged, const uint8_t *src, size_t count,
                    int in_device)
{
  const CudafftStatus status = matrix_move_stage(mx, staged, in_device);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  if (!in_device) {
    memcpy(mx->stage + staged * mx->in_frame, src, count * mx->in_frame);
    return CUDAFFT_STATUS_OK;
  }
  return cudafft_device_samples_copy(mx->device_id,
                                     (uint8_t *)mx->stage_device + staged * mx->in_frame, src,
                                     count * mx->in_frame);
}

CudafftStatus
matrix_bounce_buffers(CudafftMatrix *mx)
{
  if (!mx->bounce_in)
    mx->bounce_in = malloc(MATRIX_BOUNCE_FRAMES * mx->in_frame);
  if (!mx->bounce_out)
    mx->bounce_out = malloc(MATRIX_BOUNCE_FRAMES * mx->out_frame);
  if (!mx->bounce_in || !mx->bounce_out)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "cannot allocate the host copies of a %u x %u matrix's device samples",
                        mx->inputs, mx->outputs);
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
matrix_copy_samples(const CudafftMatrix *mx, void *dst, const void *src, size_t bytes,
                    unsigned on_device)
{
  if (on_device)
    return cudafft_device_samples_copy(mx->device_id, dst, src, bytes);
  memcpy(dst, src, bytes);
  return CUDAFFT_STATUS_OK;
}

void
matrix_device_free(CudafftMatrix *mx)
{
  cudafft_device_samples_free(mx->device_id, mx->stage_device);
  free(mx->bounce_in);
  free(mx->bounce_out);
}
