#pragma once
/// @file environment.hpp
/// The environment as an injected name -> value lookup, so that detection is a pure function
/// of it: the live process environment, a map (tests), or a saved NAME=VALUE file (the CLI's
/// --env-file).

#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>

namespace popdist {

/// Returns the value of a variable, or std::nullopt when it is unset. (Set but empty is "".)
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

/// A saved environment: variable name -> value.
using EnvMap = std::map<std::string, std::string, std::less<>>;

/// The live process environment (the only place popdist reads getenv).
[[nodiscard]] EnvLookup process_environment();

/// A lookup over a copy of `vars`: only those variables are set.
[[nodiscard]] EnvLookup lookup_in(EnvMap vars);

/// Parses `NAME=VALUE` lines; blank lines and lines starting with `#` are ignored; the value is
/// everything after the first `=` (kept verbatim, "" allowed). A line without `=` or with an
/// invalid name throws UsageError naming `source`, the line number and the line.
[[nodiscard]] EnvMap parse_env_file(std::istream& in, const std::string& source);

/// parse_env_file() on a file; an unreadable file throws UsageError naming the path.
[[nodiscard]] EnvMap read_env_file(const std::string& path);

}  // namespace popdist
