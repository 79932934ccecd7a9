/* thread_name.c: thread_name.h. */
#include "thread_name.h"

#if defined(__linux__)
#include <sys/prctl.h>
#endif

void
cudafft_name_this_thread(const char *name)
{
#if defined(__linux__)
  prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL);
#else
  (void)name;
#endif
}
