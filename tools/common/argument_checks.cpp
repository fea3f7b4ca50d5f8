#include "common/argument_checks.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "common/argument_text.hpp"
#include "popdist/error.hpp"

namespace popdist::cli {
namespace {

std::string number_problem(std::string_view text, int min, int max) {
  if (text.empty()) return fmt::format("an empty value; expected a whole number from {} to {}", min, max);
  const bool digits_only = std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits_only) {
    return fmt::format("{} is not a whole number from {} to {} (plain decimal digits only: no sign, spaces, 0x or "
                       "decimal point)",
                       shown(text), min, max);
  }
  long long value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || value < min || value > max) {
    return fmt::format("{} is out of range; expected a whole number from {} to {}", shown(text), min, max);
  }
  return {};
}

std::optional<bool> switch_value(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower == "yes" || lower == "true" || lower == "on" || lower == "1") return true;
  if (lower == "no" || lower == "false" || lower == "off" || lower == "0") return false;
  return std::nullopt;
}

std::string switch_problem(std::string_view text) {
  return fmt::format("{} is not a boolean; expected {}", shown(text), kSwitchWords);
}

// The subcommand CLI11 was parsing when it failed (the deepest one that was given).
const CLI::App* failing_command(const CLI::App* app) {
  for (const CLI::App* sub : app->get_subcommands()) return failing_command(sub);
  return app;
}

}  // namespace

int parse_whole_number(std::string_view option, std::string_view text, int min, int max) {
  if (auto problem = number_problem(text, min, max); !problem.empty()) {
    throw UsageError(fmt::format("{}: {}", option, problem));
  }
  int value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

bool parse_switch(std::string_view option, std::string_view text) {
  if (const auto value = switch_value(text)) return *value;
  throw UsageError(fmt::format("{}: {}", option, switch_problem(text)));
}

CLI::Validator whole_number(int min, int max) {
  return CLI::Validator([min, max](std::string& text) { return number_problem(text, min, max); },
                        fmt::format("[{}-{}]", min, max));
}

CLI::Validator switch_word() {
  return CLI::Validator(
      [](std::string& text) { return switch_value(text) ? std::string() : switch_problem(text); }, "");
}

namespace {

CLI::Validator seconds(bool allow_zero) {
  return CLI::Validator(
      [allow_zero](std::string& text) {
        char* end = nullptr;
        errno = 0;
        const double value = std::strtod(text.c_str(), &end);
        const bool ok = !text.empty() && *end == '\0' && errno == 0 && (value > 0 || (allow_zero && value == 0)) &&
                        value <= 1e9;
        return ok ? std::string()
                  : fmt::format("{} is not a number of seconds; expected a number {}", shown(text),
                                allow_zero ? ">= 0 (0: off)" : "> 0");
      },
      "");
}

}  // namespace

CLI::Validator positive_seconds() { return seconds(false); }

CLI::Validator seconds_or_zero() { return seconds(true); }

CLI::Validator not_empty() {
  return CLI::Validator([](std::string& text) { return text.empty() ? std::string("an empty value") : std::string(); },
                        "");
}

CLI::Validator regular_file(bool allow_stdin) {
  return CLI::Validator(
      [allow_stdin](std::string& path) -> std::string {
        if (path.empty()) return "an empty value; expected the path of a file";
        if (allow_stdin && path == "-") return {};
        struct stat info {};
        if (::stat(path.c_str(), &info) != 0) {
          return fmt::format("cannot read {}: {}", shown(path), std::strerror(errno));
        }
        if (S_ISDIR(info.st_mode)) return fmt::format("{} is a directory; expected a regular file", shown(path));
        if (!S_ISREG(info.st_mode)) {
          return fmt::format("{} is not a regular file (a fifo, socket or device); expected a regular file",
                             shown(path));
        }
        return {};
      },
      "");
}

std::string failure_message(const CLI::App* app, const CLI::Error& error) {
  const CLI::App* command = failing_command(app);
  const std::string who = command == app ? app->get_name() : app->get_name() + " " + command->get_name();
  std::string message = error.what();
  // CLI11 names its "not expected" errors after the app, so they are recognized by their text.
  const std::string not_expected = "argument was not expected: ";
  const std::string not_expected_plural = "arguments were not expected: ";
  if (message.find(not_expected) != std::string::npos || message.find(not_expected_plural) != std::string::npos) {
    auto extras = command->remaining();
    if (extras.empty()) extras = app->remaining();
    const std::string first = extras.empty() ? message.substr(message.rfind(": ") + 2) : extras.front();
    if (first.rfind("-", 0) == 0) {
      message = fmt::format("{} is not an option of {}", shown(first), who);
    } else {
      message = fmt::format("{} is not an option of {}, which takes no other words", shown(first), who);
    }
  } else if (error.get_name() == "RequiredError" && message.find("subcommand") != std::string::npos) {
    const auto words = app->remaining();
    message = words.empty()
                  ? std::string("expected a subcommand: run, topology or stacks")
                  : fmt::format("{} is not a subcommand of {} (expected run, topology or stacks)", shown(words.front()), who);
  } else if (error.get_name() == "ArgumentMismatch" && message.find("missing") != std::string::npos) {
    const auto colon = message.find(':');
    message = fmt::format("{}: needs a value", message.substr(0, colon));
  }
  return fmt::format("{}: error: {}\nRun with --help for more information.\n", who, message);
}

}  // namespace popdist::cli
