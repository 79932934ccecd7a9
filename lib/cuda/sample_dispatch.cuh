/* sample_dispatch.cuh: from a sample format known at run time to a kernel instantiated for it.
 * Internal to the library; for .cu files only. */
#ifndef CUDAFFT_SAMPLE_DISPATCH_CUH
#define CUDAFFT_SAMPLE_DISPATCH_CUH

#include <cudafft/common.h>

#include <type_traits>

/* Calls launch(std::integral_constant<int, F>{}) for the F of Formats that format is, so that the
 * call's body has the format as a template argument (decltype(f)::value); only the listed formats
 * are instantiated. false where format is none of them. */
template <int... Formats, typename Launch>
bool
cudafft_sample_dispatch(CudafftSampleFormat format, Launch &&launch)
{
  return ((format == Formats ? (launch(std::integral_constant<int, Formats>{}), true) : false) ||
          ...);
}

#endif
