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

static napi_value flock_try(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  int32_t fd;
  if (argc < 1 || napi_get_value_int32(env, argv[0], &fd) != napi_ok) {
    napi_throw_type_error(env, NULL, "flockTry(fd)");
    return NULL;
  }
  int r;
  do r = flock(fd, LOCK_EX | LOCK_NB); while (r != 0 && errno == EINTR);
  if (r != 0 && errno != EWOULDBLOCK) return strait_throw_errno(env, "flock", errno);
  napi_value out;
  napi_get_boolean(env, r == 0, &out);
  return out;
}

napi_status strait_init_lock(napi_env env, napi_value exports) {
  STRAIT_EXPORT(env, exports, "flockTry", flock_try);
  return napi_ok;
}
