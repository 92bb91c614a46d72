// SinkReqPort. Tested through tests/scheduler/scheduler_test.cc.
#include "scheduler/io.h"

namespace met {

void SinkReqPort::error(ResponseSink& sink, std::string_view message, const char* /*what*/) {
  sink.error(std::string(message));
}

}  // namespace met
