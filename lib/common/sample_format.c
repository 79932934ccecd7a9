/* sample_format.c: the public view of the sample formats (sample_values.h has the converters). */
#include "sample_values.h"

size_t
cudafft_sample_bytes(CudafftSampleFormat format)
{
  return cudafft_sample_size(format);
}

const char *
cudafft_sample_format_name(CudafftSampleFormat format)
{
  static const char *const names[CUDAFFT_SAMPLE_COUNT_] = {
      [CUDAFFT_SAMPLE_S16] = "S16LE", [CUDAFFT_SAMPLE_S24] = "S24LE",
      [CUDAFFT_SAMPLE_S32] = "S32LE", [CUDAFFT_SAMPLE_F32] = "F32LE",
      [CUDAFFT_SAMPLE_F64] = "F64LE",
  };
  return (unsigned)format < CUDAFFT_SAMPLE_COUNT_ ? names[format] : "?";
}
