// The environment lookups (DESIGN.md 2): the live process environment, a map, and saved
// NAME=VALUE files for the CLI's --env-file. This is the only file that calls getenv.

#include "popdist/environment.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <istream>
#include <memory>
#include <utility>

#include "popdist/error.hpp"

namespace popdist {
namespace {

bool is_name_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }

bool is_valid_name(std::string_view name) {
  if (name.empty() || !is_name_start(name.front())) return false;
  for (const char c : name) {
    if (!is_name_char(c)) return false;
  }
  return true;
}

bool is_blank(std::string_view line) { return line.find_first_not_of(" \t\r") == std::string_view::npos; }

bool is_comment(std::string_view line) {
  const auto first = line.find_first_not_of(" \t");
  return first != std::string_view::npos && line[first] == '#';
}

}  // namespace

EnvLookup process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    // getenv is safe to call concurrently as long as nobody calls setenv; popdist never does.
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

EnvLookup lookup_in(EnvMap vars) {
  // shared_ptr: std::function must be copyable, and copies of a lookup should not copy the map.
  auto shared = std::make_shared<const EnvMap>(std::move(vars));
  return [shared](const std::string& name) -> std::optional<std::string> {
    const auto found = shared->find(name);
    if (found == shared->end()) return std::nullopt;
    return found->second;
  };
}

EnvMap parse_env_file(std::istream& in, const std::string& source) {
  EnvMap vars;
  std::string line;
  int line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (is_blank(line) || is_comment(line)) continue;
    const auto equals = line.find('=');
    if (equals == std::string::npos) {
      throw UsageError(fmt::format("{}:{}: expected NAME=VALUE, got '{}' (no '=')", source, line_number, line));
    }
    const std::string name = line.substr(0, equals);
    if (!is_valid_name(name)) {
      throw UsageError(fmt::format(
          "{}:{}: '{}' is not a valid variable name (expected letters, digits and '_', not starting with a "
          "digit) in line '{}'",
          source, line_number, name, line));
    }
    // The value is kept verbatim: detection must see exactly what the process would have seen.
    // A repeated name takes the last value, as a shell sourcing the file would.
    vars[name] = line.substr(equals + 1);
  }
  if (in.bad()) throw UsageError(fmt::format("{}: read error after line {}", source, line_number));
  return vars;
}

EnvMap read_env_file(const std::string& path) {
  // A directory opens as an empty stream on Linux; say what it is instead of reading nothing.
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored)) {
    throw UsageError(fmt::format("environment file '{}' is a directory; expected a file of NAME=VALUE lines", path));
  }
  std::ifstream file(path);
  if (!file) throw UsageError(fmt::format("cannot open environment file '{}' for reading", path));
  return parse_env_file(file, path);
}

}  // namespace popdist
