/* cudafft/cudafft.h: the whole public API of the cudafft library in one include. Each engine's
 * header states its contract; cudafft/common.h what they share. */
#ifndef CUDAFFT_CUDAFFT_H
#define CUDAFFT_CUDAFFT_H

#include <cudafft/bands.h>
#include <cudafft/common.h>
#include <cudafft/convolve.h>
#include <cudafft/features.h>
#include <cudafft/fft.h>
#include <cudafft/matrix.h>
#include <cudafft/scope.h>
#include <cudafft/spectrum.h>
#include <cudafft/stft.h>

#endif /* CUDAFFT_CUDAFFT_H */
