/* matrix_backend.h: what the matrix convolution's front end (matrix.c) asks of a backend.
 * Internal to the library.
 *
 * The backend table has the shape every engine's has (lib/common/backend_table.h). A backend object
 * holds the delay line of input spectra (shared by every response), the responses in force and up
 * to two sets to come (the next, and one queued after it where a change is asked while the next
 * one's crossover block is being staged), and runs whole blocks of the front end's block size:
 * output block b of a call is y[b] of input block b of the same call (the header's formula, with
 * the history of every earlier call), so a backend itself never lags. The front end stages partial
 * blocks (hence the public lag), validates the responses and lists their non-empty entries, pads
 * with zeros to drain, and says at which block a change crosses over. */
#ifndef CUDAFFT_MATRIX_BACKEND_H
#define CUDAFFT_MATRIX_BACKEND_H

#include "backend_table.h"

#include <cudafft/matrix.h>

/* A non-empty entry: the response from input to output, kept as `parts` partitions of L taps
 * (the partitions up to its last nonzero tap). */
typedef struct {
  unsigned input, output;
  size_t parts;
} CudafftMatrixEntry;

/* A set of responses, as the front end hands them over: taps_data (inputs x outputs rows of taps,
 * validated), and its non-empty entries ordered by output, then input (count may be 0: every
 * entry empty); parts the most of any entry's (0 when none). */
typedef struct {
  const double *taps_data;
  size_t taps;
  const CudafftMatrixEntry *entries;
  size_t count;
  size_t parts;
} CudafftMatrixSet;

/* set (taking entries, free() it) for validated responses (inputs x outputs rows of taps): the
 * non-empty entries by output, then input, each with the partitions of L taps up to its last
 * nonzero tap. */
CudafftStatus cudafft_matrix_list_entries(const double *taps_data, size_t taps, unsigned inputs,
                                          unsigned outputs, size_t L, CudafftMatrixSet *set,
                                          CudafftMatrixEntry **entries);

/* What a backend object is made for: the validated shape, the first responses, the device. */
typedef struct {
  unsigned inputs, outputs;
  CudafftSampleFormat format;
  size_t block_size; /* L; 0 for the zero-latency tables below only */
  const CudafftMatrixSet *set;
  int device_id; /* CUDA backend: the device (as chosen: backend_choice.h) */
} CudafftMatrixSpec;

typedef enum {
  /* Filters `blocks` blocks: in (blocks x L interleaved input frames, in the spec's format; NULL
   * for zeros) to out (blocks x L interleaved output frames), each in device memory of the object's
   * context where on_device says (CudafftMemory flags: the CUDA table only, whose kernels read and
   * write them in place; the front end hands the others host memory). At block change_block[0] and
   * at block change_block[1] (SIZE_MAX: none; the second later than the first) the next responses
   * take over, crossing over during that block as the header says; from then on they are the
   * responses in force and the queued set (if any) is the next. */
  CUDAFFT_MATRIX_JOB_BLOCKS = 0,
  /* Makes `set` the next responses (slot 0, replacing the next set and dropping any queued one)
   * or the queued ones (slot 1, replacing the queued set). On failure that slot is empty and the
   * others stay. The delay line grows, keeping its history, where set needs
   * more partitions than it holds. */
  CUDAFFT_MATRIX_JOB_LOAD,
  /* The last of the sets to come (if any) is in force from now on, without a crossover. */
  CUDAFFT_MATRIX_JOB_PROMOTE
} CudafftMatrixJobKind;

typedef struct {
  CudafftMatrixJobKind kind;
  const void *in;
  void *out;
  unsigned on_device;
  size_t blocks;
  size_t change_block[2];
  const CudafftMatrixSet *set;
  unsigned slot;
} CudafftMatrixJob;

/* create allocates everything a BLOCKS job needs (out-of-memory statuses with the sizes in the
 * message). A failed run leaves a state that reset (history to zeros) recovers from. */
typedef CUDAFFT_BACKEND_TABLE_TYPE(CudafftMatrixSpec, CudafftMatrixJob) CudafftMatrixBackend;

/* The CPU table; the CUDA table in CUDA builds only. */
CUDAFFT_BACKEND_TABLE_DECL const CudafftMatrixBackend cudafft_matrix_cpu_backend;
CUDAFFT_BACKEND_TABLE_DECL const CudafftMatrixBackend cudafft_matrix_cuda_backend;

/* Block size 0 (matrix_direct.c): a head filtered in the time domain frame by frame and a tail on
 * the CPU or CUDA table above at block CUDAFFT_MATRIX_MIN_BLOCK. Their BLOCKS jobs take blocks of
 * one frame (blocks: frames; change_block: the frame, a multiple of CUDAFFT_MATRIX_MIN_BLOCK since
 * create/reset, whose crossover of that many frames starts there), and a crossover may end in a
 * later job. The CUDA one in CUDA builds only. */
CUDAFFT_BACKEND_TABLE_DECL const CudafftMatrixBackend cudafft_matrix_direct_cpu_backend;
CUDAFFT_BACKEND_TABLE_DECL const CudafftMatrixBackend cudafft_matrix_direct_cuda_backend;

#endif /* CUDAFFT_MATRIX_BACKEND_H */
