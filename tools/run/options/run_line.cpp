#include "run/options/run_line.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <memory>

#include "common/argument_checks.hpp"
#include "common/argument_text.hpp"
#include "popdist/error.hpp"
#include "run/options/run_command.hpp"

namespace popdist::cli {
namespace {

// `popdist run` as main.cpp declares it, with options of its own to fill.
struct Parser {
  CLI::App app{"", "popdist"};
  CLI::App* run = nullptr;
  RunOptions options;
  Parser() {
    run = app.add_subcommand("run");
    add_run_options(*run, options);
  }
  // Ready for another line: run's declarations are most of popdist run's own start, so one parser
  // is reused rather than declared again for each piece (tests/bench/README.md).
  void reset() {
    options = RunOptions{};
    app.clear();
  }
  // Parses `run <words>`; returns the error message, or "" when the words parsed.
  std::string parse(const std::vector<std::string>& words) {
    std::vector<std::string> reversed(words.rbegin(), words.rend());
    reversed.push_back("run");
    try {
      app.parse(reversed);
      return {};
    } catch (const CLI::ParseError& e) {
      // failure_message's "popdist run: error: <message>\nRun with --help...": the message only.
      std::string text = failure_message(&app, e);
      const std::string head = "error: ";
      if (const auto at = text.find(head); at != std::string::npos) text.erase(0, at + head.size());
      if (const auto end = text.find('\n'); end != std::string::npos) text.erase(end);
      return text;
    }
  }
};

// What CLI11 reads as an option rather than a value: --name[=...] or -x.
bool looks_like_option(const std::string& word) {
  if (word.size() < 2 || word[0] != '-') return false;
  if (word[1] != '-') return std::isalpha(static_cast<unsigned char>(word[1])) != 0;
  const auto name_end = std::min(word.find('='), word.size());
  if (name_end <= 2) return false;
  return std::all_of(word.begin() + 2, word.begin() + static_cast<std::ptrdiff_t>(name_end), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.';
  });
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// How many words the option `name` takes after it: 0 (a flag), 1, or "one if it is not an option"
// (PopRun's booleans, bare = yes), as CLI11 reads them.
enum class Arity { none, one, optional };

Arity arity_of(const CLI::Option& option) {
  if (option.get_expected_max() == 0) return Arity::none;
  return option.get_expected_min() == 0 ? Arity::optional : Arity::one;
}

bool is_switch_word(const std::string& word) {
  try {
    (void)parse_switch("", word);
    return true;
  } catch (const UsageError&) {
    return false;
  }
}

}  // namespace

std::string closest_option(const std::string& name, const std::vector<std::string>& known) {
  std::string best;
  std::size_t best_distance = std::string::npos;
  for (const auto& candidate : known) {
    const std::size_t distance = edit_distance(name, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  // Close enough to be a typo: a few edits, and fewer than a third of the name.
  return best_distance <= 3 && best_distance * 3 < name.size() ? best : std::string();
}

RunLine parse_run_line(const std::vector<std::string>& words) {
  RunLine line;
  const Parser shape;  // the declarations, to look options up
  std::vector<std::string> known;
  for (const CLI::Option* option : shape.run->get_options()) {
    for (const auto& name : option->get_lnames()) known.push_back("--" + name);
    for (const auto& name : option->get_snames()) known.push_back("-" + name);
  }

  std::vector<Notice> notices;
  std::vector<std::string> accepted;  // the pieces that parsed, in order
  Parser one;                         // each piece alone, then the whole line
  std::size_t i = 0;
  while (i < words.size() && words[i] != "--" && looks_like_option(words[i])) {
    const std::string& word = words[i];
    const bool is_long = word[1] == '-';
    const auto equals = word.find('=');
    const std::string name = is_long ? word.substr(0, equals) : word.substr(0, 2);
    const bool value_attached = is_long ? equals != std::string::npos : word.size() > 2;
    if (name == "-h" || name == "--help" || name == "--version") {
      line.help = true;
      return line;
    }
    const bool next_is_value = i + 1 < words.size() && words[i + 1] != "--" && !looks_like_option(words[i + 1]);
    const CLI::Option* option = shape.run->get_option_no_throw(name);
    if (option == nullptr) {
      const std::string guess = closest_option(name, known);
      notices.push_back({Notice::Kind::error,
                         guess.empty() ? fmt::format("{} is not an option of popdist run", shown(name))
                                       : fmt::format("{} is not an option of popdist run (did you mean {}?)",
                                                     shown(name), guess)});
      // A typo's value goes with it (so that it does not start the program): the value the meant
      // option would take (for a boolean, only a boolean word). An unknown option without a close
      // match is taken to have none.
      const CLI::Option* meant = guess.empty() ? nullptr : shape.run->get_option_no_throw(guess);
      bool takes_next = !value_attached && next_is_value && meant && arity_of(*meant) != Arity::none;
      if (takes_next && arity_of(*meant) == Arity::optional) takes_next = is_switch_word(words[i + 1]);
      i += takes_next ? 2 : 1;
      continue;
    }
    std::size_t take = 1;
    if (!value_attached) {
      switch (arity_of(*option)) {
        case Arity::none: break;
        case Arity::optional: take = next_is_value ? 2 : 1; break;
        // CLI11 takes a required value whatever it looks like ("-x A", "-1"), except another of
        // run's options: that is CLI11's "needs a value" error below.
        case Arity::one: {
          const bool next_is_option =
              i + 1 >= words.size() || words[i + 1] == "--" ||
              shape.run->get_option_no_throw(words[i + 1].substr(0, words[i + 1].find('='))) != nullptr;
          take = next_is_option ? 1 : 2;
          break;
        }
      }
    }
    const std::vector<std::string> piece(words.begin() + static_cast<std::ptrdiff_t>(i),
                                         words.begin() + static_cast<std::ptrdiff_t>(i + take));
    one.reset();
    if (auto error = one.parse(piece); !error.empty()) {
      notices.push_back({Notice::Kind::error, std::move(error)});
    } else {
      notices.insert(notices.end(), one.options.notices.begin(), one.options.notices.end());
      accepted.insert(accepted.end(), piece.begin(), piece.end());
    }
    i += take;
  }

  // The program: everything from the first word that is not an option (or after "--").
  if (i < words.size()) {
    if (words[i] != "--") accepted.push_back("--");
    accepted.insert(accepted.end(), words.begin() + static_cast<std::ptrdiff_t>(i), words.end());
  }
  one.reset();
  if (auto error = one.parse(accepted); !error.empty()) notices.push_back({Notice::Kind::error, std::move(error)});
  line.options = std::move(one.options);
  line.options.notices = std::move(notices);
  return line;
}

}  // namespace popdist::cli
