/* scope_colormaps.h: the colormap tables of the spectrum scope (cudafft/scope.h). Internal to the
 * library. */
#ifndef CUDAFFT_SCOPE_COLORMAPS_H
#define CUDAFFT_SCOPE_COLORMAPS_H

#include <cudafft/scope.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The 256 RGB entries (768 floats in [0, 1]) of a table colormap; NULL for GREY, which has none
 * (scope_values.h computes it). */
const float *cudafft_scope_colormap_table(CudafftColormap colormap);

#ifdef __cplusplus
}
#endif

#endif
