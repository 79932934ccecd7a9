/* fft_sizes.cuh: the transform sizes the engines' kernel tables are built for, listed once: the
 * powers of two CUDAFFT_FUSED_MIN_SIZE..CUDAFFT_MAX_SIZE (cudafft/common.h), each with fused
 * kernels of its own. A table is made with size_table(), which instantiates Make::entry<n>() for
 * each size n, and read with size_table_entry(). Every other supported size (cudafft/common.h)
 * runs on the mixed-radix kernels, one per kind for all sizes (mixed_fft.cuh), whose tables are
 * made with mixed_size_table_entry(). Internal to the library (host code). */
#ifndef CUDAFFT_FFT_SIZES_CUH
#define CUDAFFT_FFT_SIZES_CUH

#include "sizes.h"

#include <cudafft/common.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <utility>

namespace cudafft {

constexpr int
log2_of(size_t n)
{
  return n <= 1 ? 0 : 1 + log2_of(n / 2);
}

constexpr int kSizeCount = log2_of(CUDAFFT_MAX_SIZE) - log2_of(CUDAFFT_FUSED_MIN_SIZE) + 1;

/* Where n stands in the list; -1 where it is not a listed size. */
inline int
size_index(size_t n)
{
  for (int i = 0; i < kSizeCount; ++i)
    if (((size_t)CUDAFFT_FUSED_MIN_SIZE << i) == n)
      return i;
  return -1;
}

template <typename Make, size_t... I>
auto
size_table_(std::index_sequence<I...>)
{
  return std::array<decltype(Make::template entry<CUDAFFT_FUSED_MIN_SIZE>()), sizeof...(I)>{
      {Make::template entry<(CUDAFFT_FUSED_MIN_SIZE << I)>()...}};
}

/* The entry of size n in the table Make builds (made on first use, kept for the process); nullptr
 * where n is not a listed size. */
template <typename Make>
const auto *
size_table_entry(size_t n)
{
  static const auto table = size_table_<Make>(std::make_index_sequence<kSizeCount>{});
  const int i = size_index(n);
  return i < 0 ? nullptr : &table[(size_t)i];
}

/* Every supported size (cudafft/common.h), ascending, as lib/common/sizes.c decides them: the
 * tables of the mixed-radix kernels, which serve every size, are indexed by it. kSupportedSizesMax
 * bounds their count (tests/test_mixed_fft.cu checks that it holds them all). */
constexpr int kSupportedSizesMax = 512;

struct SupportedSizes {
  int count = 0;
  int size[kSupportedSizesMax] = {};

  SupportedSizes()
  {
    for (size_t n = CUDAFFT_MIN_SIZE; n <= CUDAFFT_MAX_SIZE && count < kSupportedSizesMax; n++)
      if (cudafft_is_fft_size(n))
        size[count++] = (int)n;
  }
};

/* The list (made on first use, kept for the process). */
inline const SupportedSizes &
supported_sizes()
{
  static const SupportedSizes sizes;
  return sizes;
}

/* Where n stands among the supported sizes; -1 where it is not one. */
inline int
supported_size_index(size_t n)
{
  if (n > CUDAFFT_MAX_SIZE)
    return -1;
  const SupportedSizes &s = supported_sizes();
  const int *end = s.size + s.count;
  const int *at = std::lower_bound(s.size, end, (int)n);
  return at != end && (size_t)*at == n ? (int)(at - s.size) : -1;
}

/* The entry of supported size n in the table Make builds with Make::entry(n) for every supported
 * size (made on first use, kept for the process); nullptr where n is not a supported size. */
template <typename Make>
const auto *
supported_table_entry(size_t n)
{
  using Entry = decltype(Make::entry(size_t{}));
  struct Table {
    Entry entry[kSupportedSizesMax] = {};
    Table()
    {
      const SupportedSizes &s = supported_sizes();
      for (int i = 0; i < s.count; i++)
        entry[i] = Make::entry((size_t)s.size[i]);
    }
  };
  static const Table table;
  const int i = supported_size_index(n);
  return i < 0 ? nullptr : &table.entry[i];
}

} // namespace cudafft

#endif
