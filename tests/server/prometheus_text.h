// PrometheusText: a strict reader of the Prometheus text exposition format
// (version 0.0.4) for the server's tests: every line is a HELP, a TYPE, or a
// sample `name{label="v",...} value`; a sample's family must have been typed
// first. Threading: plain functions. Used by tests/server/server_metrics_test.cc
// and tests/server/server_endpoints_test.cc.
#pragma once

#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>
#include <string>

namespace met::testing {

struct PrometheusText {
  std::map<std::string, std::string> types;  // family -> counter|gauge|histogram|...
  std::map<std::string, double> samples;     // "name{labels}" exactly as written -> value
  std::string error;                         // "" when every line parsed

  // The first sample whose key starts with `name` followed by '{' or ' '.
  std::optional<double> value(const std::string& name) const {
    for (const auto& [key, v] : samples) {
      if (key == name || key.rfind(name + "{", 0) == 0) return v;
    }
    return std::nullopt;
  }
};

inline bool is_metric_name(const std::string& s) {
  if (s.empty() || (std::isdigit(static_cast<unsigned char>(s[0])) != 0)) return false;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_' && c != ':') return false;
  }
  return true;
}

// The family a sample name belongs to (histogram parts map to their family).
inline std::string family_of(const std::string& name, const std::map<std::string, std::string>& types) {
  if (types.count(name) != 0) return name;
  for (const char* suffix : {"_bucket", "_sum", "_count"}) {
    const std::string s(suffix);
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
      return name.substr(0, name.size() - s.size());
    }
  }
  return name;
}

inline PrometheusText parse_prometheus_text(const std::string& text) {
  PrometheusText out;
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    const std::string where = "line " + std::to_string(n) + ": '" + line + "'";
    if (line.empty() || line.rfind("# HELP ", 0) == 0) continue;
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream t(line.substr(7));
      std::string name, type;
      t >> name >> type;
      if (!is_metric_name(name) || type.empty()) return out.error = "bad TYPE " + where, out;
      out.types[name] = type;
      continue;
    }
    if (line[0] == '#') return out.error = "unknown comment " + where, out;
    const size_t brace = line.find('{');
    const size_t space = line.rfind(' ');
    if (space == std::string::npos) return out.error = "no value " + where, out;
    const std::string name = line.substr(0, std::min(brace, space));
    if (!is_metric_name(name)) return out.error = "bad name " + where, out;
    if (out.types.count(family_of(name, out.types)) == 0) return out.error = "untyped sample " + where, out;
    const std::string value = line.substr(space + 1);
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    if (end == value.c_str() || *end != '\0') return out.error = "bad value " + where, out;
    out.samples[line.substr(0, space)] = v;
  }
  return out;
}

}  // namespace met::testing
