// SinkReqPort and the telemetry names. Tested through tests/scheduler/scheduler_test.cc.
#include "scheduler/io.h"

namespace met {

void SinkReqPort::error(ResponseSink& sink, ErrorEvent event, const char* /*what*/) {
  sink.error(std::move(event.message), std::move(event.param));
}

const char* request_event_name(RequestEventKind kind) {
  switch (kind) {
    case RequestEventKind::kQueued: return "queued";
    case RequestEventKind::kAdmitted: return "admitted";
    case RequestEventKind::kFirstToken: return "first_token";
    case RequestEventKind::kPreempted: return "preempted";
    case RequestEventKind::kSwapped: return "swapped";
    case RequestEventKind::kResumed: return "resumed";
    case RequestEventKind::kFinished: return "finished";
    case RequestEventKind::kFailed: return "failed";
  }
  return "unknown";
}

}  // namespace met
