#include "job/torch_error_file.hpp"

#include <string>

namespace popdist::cli {
namespace {

// The JSON string value after `key` in `json`, unescaped; empty when absent. Enough of JSON for
// the error file's fixed shape: \uXXXX outside ASCII becomes '?'.
std::string json_string_after(const std::string& json, const std::string& key, std::size_t from = 0) {
  const auto at = json.find("\"" + key + "\"", from);
  if (at == std::string::npos) return {};
  std::size_t i = json.find_first_not_of(" \t\r\n:", at + key.size() + 2);
  if (i == std::string::npos || json[i] != '"') return {};
  std::string value;
  for (++i; i < json.size() && json[i] != '"'; ++i) {
    if (json[i] != '\\' || i + 1 >= json.size()) {
      value += json[i];
      continue;
    }
    const char escaped = json[++i];
    switch (escaped) {
      case 'n': value += '\n'; break;
      case 't': value += '\t'; break;
      case 'r': break;
      case 'u': {
        const unsigned code = i + 4 < json.size() ? std::stoul(json.substr(i + 1, 4), nullptr, 16) : '?';
        value += code < 0x80 ? static_cast<char>(code) : '?';
        i += 4;
        break;
      }
      default: value += escaped;
    }
  }
  return value;
}

}  // namespace

std::string torch_error_text(const std::string& json) {
  if (auto callstack = json_string_after(json, "py_callstack"); !callstack.empty()) return callstack;
  // {"message": {"message": "...", ...}} or {"message": "..."}
  const auto outer = json.find("\"message\"");
  if (outer == std::string::npos) return {};
  if (auto inner = json_string_after(json, "message", outer + 1); !inner.empty()) return inner;
  return json_string_after(json, "message");
}

}  // namespace popdist::cli
