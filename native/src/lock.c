// Advisory locks on an open file (flock(2)), which Node cannot take:
//
//   flockTry(fd) -> boolean
//       an exclusive lock on fd's open file description without waiting: true when taken
//       (or already held through this description), false when another description holds
//       it (EWOULDBLOCK); any other failure throws. The lock lives as long as any process
//       holds a descriptor of that open file description (a child given the fd in its
//       stdio shares it), and the kernel drops it when the last one is closed, also when
//       its holders are killed with SIGKILL: a lock never outlives its holders.
#include <errno.h>
#include <sys/file.h>
#include "common.h"

napi_value strait_js_flock_try(napi_env env, napi_callback_info info) {
  strait_args a;
  int32_t fd;
  if (!strait_args_get(env, info, "flockTry", 1, 1, &a) || !strait_get_fd(&a, 0, "fd", &fd)) return NULL;
  int r;
  do r = flock(fd, LOCK_EX | LOCK_NB);
  while (r != 0 && errno == EINTR);
  if (r != 0 && errno != EWOULDBLOCK) return strait_throw_errno(env, "flock", errno);
  napi_value out;
  napi_get_boolean(env, r == 0, &out);
  return out;
}
