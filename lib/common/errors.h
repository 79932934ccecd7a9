/* errors.h: how the library reports a failure: a status, and a message for
 * cudafft_last_error_message(). Internal to the library. */
#ifndef CUDAFFT_ERRORS_H
#define CUDAFFT_ERRORS_H

#include <cudafft/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Records a detailed message for cudafft_last_error_message() and returns status, so that a
 * failure reads: return cudafft_fail (CUDAFFT_STATUS_X, "what failed: %s", why); */
CudafftStatus cudafft_fail(CudafftStatus status, const char *format, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#ifdef __cplusplus
}
#endif

#endif
