#pragma once
// Turning fuzz bytes into the inputs popdist reads: lines of NAME=VALUE (an environment) and
// NUL-separated words (a command line). Shared by the harnesses; no checks, no limits: the code
// under test must cope with whatever comes.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "popdist/environment.hpp"

namespace popdist::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// Every line with a '=' becomes a variable (the first one wins, as a later putenv would not);
/// names and values may hold any byte, as a hostile environment can.
inline EnvMap environment_from(std::string_view text) {
  EnvMap vars;
  while (!text.empty()) {
    const auto end = text.find('\n');
    const auto line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    const auto equals = line.find('=');
    if (equals != std::string_view::npos) vars.emplace(std::string(line.substr(0, equals)), std::string(line.substr(equals + 1)));
  }
  return vars;
}

/// NUL-separated words, as the kernel hands argv over.
inline std::vector<std::string> words_from(std::string_view text) {
  std::vector<std::string> words;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto end = text.find('\0', start);
    words.emplace_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return words;
}

}  // namespace popdist::fuzz
