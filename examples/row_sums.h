/* row_sums.h: the application's own CUDA code in cuda-memory-app: the byte sums of each
 * row of a pitched frame in device memory, computed on the device. */
#ifndef ROW_SUMS_H
#define ROW_SUMS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* sums[r] = the sum of the first row_bytes bytes of row r of the frame at device pointer frame
 * (rows pitch bytes apart), for rows 0..rows-1; sums is host memory. Returns 0, or -1 with CUDA's
 * words in error (error_size bytes). */
int row_sums_on_device(const void *frame, size_t pitch, size_t row_bytes, size_t rows,
                       uint64_t *sums, char *error, size_t error_size);

#ifdef __cplusplus
}
#endif

#endif
