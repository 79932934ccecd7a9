/* thread_name.c: thread_name.h. */
#include "thread_name.h"

#if defined(__linux__)
#include <sys/prctl.h>
#endif

static _Thread_local int own_thread;

void
cudafft_name_this_thread(const char *name)
{
  own_thread = 1;
#if defined(__linux__)
  prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL);
#else
  (void)name;
#endif
}

int
cudafft_on_own_thread(void)
{
  return own_thread;
}
