/* caller_context.cuh: calls into the library leave the caller's current CUDA context (and so its
 * current device) as they found it, as CUDA's own libraries do: the library makes an object's
 * context current for its work (cudafft_use_device()), and an application's later allocations,
 * plans and events must not follow it to another device. Internal to the library; for .cu files.
 *
 * Every CUDA backend table's members (backend_table.h) and the executor's CUDA device run inside a
 * CudafftKeepCaller, through cudafft_keeping_caller<fn>; so do the calls of cuda_host.h that make a
 * device current. Nested keepers are harmless: the inner one restores what the outer one will
 * find. */
#ifndef CUDAFFT_CALLER_CONTEXT_CUH
#define CUDAFFT_CALLER_CONTEXT_CUH

#include "cuda_host.h"

/* The caller's side, taken on entry (cuda_context.cu): the current context, and where none is
 * current the runtime's device for the thread, whose primary context the runtime would bind. */
extern "C" void cudafft_cuda_caller_save(CudafftCallerContext *saved);
/* Puts it back where the call left another context current: the saved context; for none, the
 * saved device's primary context where it exists, else none. */
extern "C" void cudafft_cuda_caller_restore(const CudafftCallerContext *saved);

class CudafftKeepCaller {
public:
  CudafftKeepCaller()
  {
    cudafft_cuda_caller_save(&saved_);
  }
  ~CudafftKeepCaller()
  {
    cudafft_cuda_caller_restore(&saved_);
  }
  CudafftKeepCaller(const CudafftKeepCaller &) = delete;
  CudafftKeepCaller &operator=(const CudafftKeepCaller &) = delete;

private:
  CudafftCallerContext saved_;
};

/* cudafft_keeping_caller<fn>: fn, run inside a CudafftKeepCaller; for the members of a table. */
template <auto Fn> struct CudafftKeepingCaller;

template <typename R, typename... Args, R (*Fn)(Args...)> struct CudafftKeepingCaller<Fn> {
  static R
  call(Args... args)
  {
    CudafftKeepCaller keep;
    return Fn(args...);
  }
};

template <auto Fn> constexpr auto cudafft_keeping_caller = &CudafftKeepingCaller<Fn>::call;

#endif
