/* executor_test_kind.cu: see executor_test_kind.h. */
#include "cuda_check.cuh"
#include "executor_test_kind.h"

namespace {

struct AffineDesc {
  const float *in;
  float *out;
  float *state;
  unsigned n;
  float a, offset;
  int reset;
};

/* unit u of the batch: floats [unit * AFFINE_UNIT, ...) of job `job` */
struct UnitRef {
  unsigned job, unit;
};

size_t
units_of(const CudafftJob *job)
{
  return (job->out_bytes / sizeof(float) + AFFINE_UNIT - 1) / AFFINE_UNIT;
}

size_t
total_units(CudafftJob *const *jobs, size_t count)
{
  size_t units = 0;
  for (size_t i = 0; i < count; i++)
    units += units_of(jobs[i]);
  return units;
}

__device__ float
count_before(const AffineDesc &d)
{
  return d.reset || !d.state ? 0.0f : *d.state;
}

/* One block per unit: the outputs. */
__global__ void
affine_outputs(const AffineDesc *descs, const UnitRef *units)
{
  const UnitRef ref = units[blockIdx.x];
  const AffineDesc d = descs[ref.job];
  const unsigned i = ref.unit * AFFINE_UNIT + threadIdx.x;
  if (i < d.n)
    d.out[i] = d.a * d.in[i] + d.offset + count_before(d);
}

/* One thread per job, after every output is written: the owners' counts. */
__global__ void
affine_counts(const AffineDesc *descs, unsigned count)
{
  const unsigned j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < count && descs[j].state)
    *descs[j].state = count_before(descs[j]) + 1.0f;
}

size_t
affine_aux_bytes(CudafftJob *const *jobs, size_t count)
{
  return count * sizeof(AffineDesc) + total_units(jobs, count) * sizeof(UnitRef);
}

void
affine_prepare(CudafftJob *const *jobs, size_t count, void *host_aux, void *device_aux)
{
  (void)device_aux;
  AffineDesc *descs = static_cast<AffineDesc *>(host_aux);
  UnitRef *units = reinterpret_cast<UnitRef *>(descs + count);
  for (size_t j = 0; j < count; j++) {
    const AffineJob *t = reinterpret_cast<const AffineJob *>(jobs[j]);
    descs[j] = AffineDesc{static_cast<const float *>(t->job.device_in),
                          static_cast<float *>(t->job.device_out),
                          t->state,
                          (unsigned)(t->job.out_bytes / sizeof(float)),
                          t->a,
                          t->offset,
                          t->reset};
    for (size_t u = 0; u < units_of(jobs[j]); u++)
      *units++ = UnitRef{(unsigned)j, (unsigned)u};
  }
}

CudafftStatus
affine_launch(CudafftJob *const *jobs, size_t count, void *device_aux, void *stream)
{
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  const AffineDesc *descs = static_cast<const AffineDesc *>(device_aux);
  const UnitRef *units = reinterpret_cast<const UnitRef *>(descs + count);
  const size_t unit_count = total_units(jobs, count);
  if (unit_count > 0) {
    affine_outputs<<<(unsigned)unit_count, AFFINE_UNIT, 0, s>>>(descs, units);
    CUDAFFT_CHECK(cudaGetLastError());
  }
  affine_counts<<<(unsigned)((count + 255) / 256), 256, 0, s>>>(descs, (unsigned)count);
  CUDAFFT_CHECK(cudaGetLastError());
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
bad_launch(CudafftJob *const *jobs, size_t count, void *device_aux, void *stream)
{
  (void)jobs;
  affine_counts<<<1, 4096, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const AffineDesc *>(device_aux), (unsigned)count);
  CUDAFFT_CHECK(cudaGetLastError());
  return CUDAFFT_STATUS_OK;
}

} // namespace

extern "C" const CudafftWorkKind executor_test_affine_kind = {
    "affine test kind", affine_aux_bytes, affine_prepare, affine_launch, nullptr,
};

extern "C" const CudafftWorkKind executor_test_bad_launch_kind = {
    "bad launch test kind", affine_aux_bytes, affine_prepare, bad_launch, nullptr,
};

extern "C" size_t
executor_test_affine_aux_bytes(size_t n)
{
  return sizeof(AffineDesc) + (n + AFFINE_UNIT - 1) / AFFINE_UNIT * sizeof(UnitRef);
}
