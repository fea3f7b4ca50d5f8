#include "run/launch/shell_words.hpp"

#include <fmt/format.h>

#include "common/argument_text.hpp"
#include "popdist/error.hpp"

namespace popdist::cli {

std::vector<std::string> split_shell_words(std::string_view text, std::string_view what) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else if (c == '\'') {
      const std::size_t close = text.find('\'', i + 1);
      if (close == std::string_view::npos) {
        throw UsageError(fmt::format("{} {}: unterminated single quote", what, shown(text)));
      }
      word.append(text.substr(i + 1, close - i - 1));
      i = close;
      in_word = true;
    } else if (c == '"') {
      std::size_t j = i + 1;
      for (; j < text.size() && text[j] != '"'; ++j) {
        if (text[j] == '\\' && j + 1 < text.size() && std::string_view("\"\\$`").find(text[j + 1]) != std::string_view::npos) {
          ++j;
        }
        word += text[j];
      }
      if (j >= text.size()) throw UsageError(fmt::format("{} {}: unterminated double quote", what, shown(text)));
      i = j;
      in_word = true;
    } else if (c == '\\') {
      if (i + 1 >= text.size()) throw UsageError(fmt::format("{} {}: trailing backslash", what, shown(text)));
      word += text[++i];
      in_word = true;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

std::string shell_quote(std::string_view word) {
  const bool safe = !word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                            "0123456789_@%+=:,./-^") == std::string_view::npos;
  if (safe) return std::string(word);
  std::string quoted = "'";
  for (const char c : word) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

std::string shell_join(const std::vector<std::string>& words) {
  std::string line;
  for (const auto& word : words) {
    if (!line.empty()) line += ' ';
    line += shell_quote(word);
  }
  return line;
}

}  // namespace popdist::cli
