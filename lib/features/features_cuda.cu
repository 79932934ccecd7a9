/* features_cuda.cu: placeholder until the CUDA backend lands in this branch. */
#include "errors.h"
#include "features_backend.h"

namespace {
CudafftStatus
create(const CudafftFeaturesSpec *, void **impl)
{
  *impl = nullptr;
  return cudafft_fail(CUDAFFT_STATUS_UNSUPPORTED, "features: no CUDA backend yet");
}
void
destroy(void *)
{
}
CudafftStatus
run(void *, const CudafftFeaturesJob *)
{
  return CUDAFFT_STATUS_UNSUPPORTED;
}
CudafftStatus
reset(void *)
{
  return CUDAFFT_STATUS_OK;
}
void *
stream(const void *)
{
  return nullptr;
}
} // namespace

extern "C" const CudafftFeaturesBackend cudafft_features_cuda_backend = {create, destroy, run,
                                                                         reset, stream};
