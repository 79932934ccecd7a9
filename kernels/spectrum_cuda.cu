/* spectrum_cuda.cu: placeholder until the CUDA spectrum backend lands. */
#include "spectrum_backend.h"

const CudafftSpectrumOps *const cudafft_spectrum_cuda_ops = nullptr;
