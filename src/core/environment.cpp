// The environment lookups (design.md §2): the live process environment, a map, and saved
// NAME=VALUE files for the CLI's --env-file. This is the only file that calls getenv.

#include "popdist/environment.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <istream>
#include <memory>
#include <utility>

#include "core/numbers.hpp"
#include "popdist/error.hpp"
#include "popdist/text_input.hpp"

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
  for_each_input_line(in, source, [&](int line_number, std::string_view line) {
    if (is_blank(line) || is_comment(line)) return;
    const auto equals = line.find('=');
    if (equals == std::string_view::npos) {
      throw UsageError(
          fmt::format("{}:{}: expected NAME=VALUE, got '{}' (no '=')", source, line_number, detail::printable(line)));
    }
    const std::string_view name = line.substr(0, equals);
    if (!is_valid_name(name)) {
      throw UsageError(fmt::format(
          "{}:{}: '{}' is not a valid variable name (expected letters, digits and '_', not starting with a "
          "digit) in line '{}'",
          source, line_number, detail::printable(name), detail::printable(line)));
    }
    // The value is kept verbatim: detection must see exactly what the process would have seen.
    // A repeated name takes the last value, as a shell sourcing the file would.
    vars.insert_or_assign(std::string(name), std::string(line.substr(equals + 1)));
  });
  return vars;
}

EnvMap read_env_file(const std::string& path) {
  // Checked before opening: a directory opens as an empty stream, a fifo without a writer blocks,
  // and a sparse 8 GB file would be read to the end.
  check_input_file(path, "environment file");
  std::ifstream file(path);
  if (!file) throw UsageError(fmt::format("cannot open environment file '{}' for reading", detail::printable(path)));
  return parse_env_file(file, path);
}

}  // namespace popdist
