/* contexts.h: the table of CUDA driver contexts an application attached
 * (cudafft_cuda_context_attach(), cudafft/common.h, Contexts): which context and which device each
 * context id stands for. Internal to the library; plain C, in every build (a CPU-only build's table
 * stays empty: its attach fails before it reaches the table).
 *
 * Reads are lock-free, since cudafft_use_device() reads an id's context on every call into a
 * backend object; attach and detach write under one mutex. A slot is read only while its id is
 * attached (the application's promise: no object made with an id outlives its detach), so a
 * reader never sees a slot change under it. */
#ifndef CUDAFFT_CONTEXTS_H
#define CUDAFFT_CONTEXTS_H

#include <cudafft/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Contexts the table holds at once: far more than a process uses (one per GPU and pipeline). */
#define CUDAFFT_CONTEXT_SLOTS 64

/* The CUDA device ordinal a device id stands for: the id itself below CUDAFFT_CONTEXT_ID_BASE
 * (negative ones included: no range check), the context's device for an attached context id, -1
 * for a context id that is not attached. What devices.h's load table, device attributes and memory
 * locations take. */
int cudafft_context_ordinal(int id);

/* The context (a CUcontext) of an attached context id; NULL for any other id. */
void *cudafft_context_handle(int id);

/* Adds a reference to `context` (on CUDA device `device`), taking a new id where it is not in the
 * table yet; UNSUPPORTED with a message where the table is full. */
CudafftStatus cudafft_context_table_add(void *context, int device, int *id);

/* Gives one reference of id back (the slot is free once none is left); ignores ids that are not
 * attached. */
void cudafft_context_table_remove(int id);

#ifdef __cplusplus
}
#endif

#endif
