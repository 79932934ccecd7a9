/* convolve_front.h: what the convolution's front end shares between its two files: the object
 * (struct CudafftConvolve) and its filter slots, and the calls of convolve_crossover.c (making and
 * running filters, the crossover from one to the next, restarts) that convolve.c's pushes, kernel
 * and block-size changes, drains and resets use. Not a public header. */
#ifndef CUDAFFT_CONVOLVE_FRONT_H
#define CUDAFFT_CONVOLVE_FRONT_H

#include "convolve_backend.h"
#include "device_pointer.h"

#include <stddef.h>
#include <stdint.h>

#define BLOCK ((size_t)CUDAFFT_CONVOLVE_BLOCK)

/* The paths as the front end sees them: the backends' two, and the split one (convolve_split.h). */
typedef enum { PATH_DIRECT, PATH_PARTITIONED, PATH_SPLIT } Path;

typedef struct {
  void *impl; /* NULL: no filter in this slot; a CudafftConvolveSplit on the split path */
  Path path;
  size_t taps;
  size_t grain;   /* its runs are whole multiples of this many frames */
  size_t latency; /* cudafft_convolve_latency() while it is in force */
  size_t span;    /* its share of a crossover's length X: the block size it was made for (0: MIN) */
} Filter;

struct CudafftConvolve {
  unsigned channels;
  CudafftSampleFormat format;
  size_t frame_bytes;
  CudafftBackend backend;
  const CudafftConvolveBackend *ops;
  /* The device asked for, until the first filter is made; then the one it runs on (-1 for the
   * CPU backend): every later filter (a new kernel, a new block size, the split path's parts) is
   * made there, so that one convolution never spans devices. */
  int device_id;
  double mix;
  size_t block_size; /* the newest, which the next filter made is made for */

  /* The newest kernel, kept to remake it for a new block size (rows x taps). */
  double *kernel;
  size_t kernel_taps;
  unsigned kernel_rows;

  /* The filter in force; the next one, crossing over from `change` (a multiple of X, the larger
   * of their spans) to change + X; a later one set during that crossover, which starts at the
   * first multiple of its own X from there. */
  Filter current, next, queued;
  size_t change;

  /* Frames since create/reset/drain: pushed in (zeros included while draining) and written out.
   * pushed - produced frames wait in `stage` (only on stretches whose grain is above 1: their
   * count is pushed % grain there, and 0 elsewhere). */
  size_t pushed, produced;
  /* The last reset of the filter in force failed (on the GPU, a batch that failed took its
   * clearing with it): its history is not known to be zero, and the next run clears it first. */
  int uncleared;
  uint8_t *stage;   /* BLOCK frames: a partial input block */
  uint8_t *scratch; /* BLOCK frames: the next filter's output during the crossover */
  uint8_t *tail;    /* BLOCK frames: a drained block of which only the start is wanted */

  /* Samples in device memory (push_device), each made at its first use: the partial input block
   * where the input came in device memory (the staged frames are in `stage_device` while
   * stage_on_device is set, else in `stage`), and host copies of BLOCK frames of input and output
   * for what only runs on host memory (a crossover's blend, the composed split path). */
  void *stage_device;
  int stage_on_device;
  uint8_t *bounce_in, *bounce_out;
  /* Where the device work of the latest push that did not wait ends (zeroed: none): the device
   * stage it may read is written again only after it. */
  CudafftFence deferred;
  CudafftCheckedMemory checked; /* device memory that passed (push_device) */
};

CudafftStatus front_filter_create(const CudafftConvolve *cv, const CudafftConvolveBackend *ops,
                                  const CudafftConvolveKernel *kernel, size_t block_size,
                                  Filter *filter);

void front_filter_destroy(const CudafftConvolve *cv, Filter *filter);

size_t front_round_up(size_t n, size_t grid);

size_t front_crossover(const CudafftConvolve *cv);

void front_restart(CudafftConvolve *cv);

CudafftStatus front_restart_after(CudafftConvolve *cv, CudafftStatus status);

void front_stretch_at(const CudafftConvolve *cv, size_t *grain, size_t *left);

size_t front_push_step(const CudafftConvolve *cv, size_t remaining, size_t *taken);

CudafftStatus front_run(CudafftConvolve *cv, const void *in, size_t frames, uint8_t *out,
                        unsigned on_device, CudafftFence after, CudafftFence *done);

size_t front_output_frames(const CudafftConvolve *cv, size_t frames);

#endif /* CUDAFFT_CONVOLVE_FRONT_H */
