// The global functions every template sees: range, namespace, dict,
// raise_exception(msg) (fails the render with "TemplateError: msg") and
// strftime_now(fmt) (formats the Runtime's injected "now" with C strftime, as
// Python's datetime.strftime does on Linux).
// Threading: installs into one render's root Scope. Tested by
// tests/chat/globals_test.cc.
#pragma once

#include "chat/jinja/runtime.h"
#include "chat/jinja/scope.h"
#include "core/status.h"

namespace met::jinja {

Status install_globals(Runtime& rt, Scope& scope);

}  // namespace met::jinja
