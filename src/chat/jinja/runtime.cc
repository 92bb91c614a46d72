// Runtime. Tested through tests/chat/limits_test.cc.
#include "chat/jinja/runtime.h"

#include "chat/jinja/errors.h"

namespace met::jinja {

Status Runtime::spend(uint64_t n) {
  if (n > max_steps_ - steps_used_) {
    return limit_error("the template took more than {} steps", max_steps_);
  }
  steps_used_ += n;
  return ok_status();
}

}  // namespace met::jinja
