#include "run/options/poprun_ipu_options.hpp"

#include <fmt/format.h>

#include <charconv>
#include <climits>

#include "common/argument_checks.hpp"
#include "common/argument_text.hpp"

namespace popdist::cli {
namespace {

constexpr std::string_view kNoVipu = "popdist talks to no V-IPU server";
constexpr std::string_view kNoPartition = "popdist creates and binds no IPU partition";
constexpr std::string_view kNoCopies = "popdist copies nothing to the hosts: they need the program and its environment";

// An IPv4 subnet in CIDR form (a.b.c.d/n), which Open MPI's *_tcp_if_include take as it is.
std::string subnet_problem(const std::string& text) {
  const auto bad = [&text] { return fmt::format("{} is not a subnet; expected a.b.c.d/n, e.g. 10.1.0.0/16", shown(text)); };
  const auto slash = text.find('/');
  if (slash == std::string::npos) return bad();
  const char* p = text.data();
  const char* const end = text.data() + text.size();
  for (int octet = 0; octet < 4; ++octet) {
    unsigned value = 256;
    const auto [next, ec] = std::from_chars(p, end, value);
    if (ec != std::errc() || next == p || value > 255 || next - p > 3) return bad();
    p = next;
    if (*p != (octet < 3 ? '.' : '/')) return bad();
    ++p;
  }
  unsigned prefix = 33;
  const auto [last, ec] = std::from_chars(p, end, prefix);
  if (ec != std::errc() || last != end || last == p || prefix > 32) return bad();
  return {};
}

CLI::Validator subnet() {
  return CLI::Validator([](std::string& text) { return subnet_problem(text); }, "");
}

void check_value(CLI::Option& option, std::string_view form) {
  if (form == "yes|no") {
    option.expected(0, 1)->check(switch_word());
  } else if (form == "N") {
    option.check(whole_number(1, INT_MAX));
  } else if (form == "SECONDS") {
    option.check(whole_number(0, INT_MAX));
  } else if (form == "PORT") {
    option.check(whole_number(1, 65535));
  } else if (form == "CIDR") {
    option.check(subnet());
  } else {
    option.check(not_empty());
  }
}

}  // namespace

const std::vector<PopRunOption>& poprun_ipu_options() {
  using A = PopRunAnswer;
  static const std::vector<PopRunOption> options{
      {"--import-config", "FILE", A::refuse,
       "refused: popdist run reads no PopRun configuration file, and ignoring it would drop its options; give them "
       "on the command line"},
      {"--export-config", "FILE", A::ignore, "popdist run writes no PopRun configuration file"},
      {"--overwrite-config", "yes|no", A::ignore, "popdist run writes no PopRun configuration file"},
      {"--version-format", "TEXT", A::ignore, "popdist run prints no PopRun version"},
      {"--num-ilds", "N", A::keep,
       "kept: sets ipuLinkDomainSize = replicas x IPUs per replica / N in POPLAR_TARGET_OPTIONS (unless you set that "
       "variable), as PopRun does for its partition; no partition is created"},
      {"--vipu-server-host", "TEXT", A::ignore, kNoVipu},
      {"--vipu-server-port", "PORT", A::ignore, kNoVipu},
      {"--vipu-server-timeout", "SECONDS", A::ignore, kNoVipu},
      {"--vipu-partition", "TEXT", A::ignore, kNoPartition},
      {"--vipu-partition-attempts", "N", A::ignore, kNoPartition},
      {"--update-partition", "yes|no", A::ignore, kNoPartition},
      {"--reset-partition", "yes|no", A::ignore, kNoPartition},
      {"--remove-partition", "yes|no", A::ignore, kNoPartition},
      {"--vipu-cluster", "TEXT", A::ignore, kNoPartition},
      {"--vipu-allocation", "TEXT", A::ignore, kNoPartition},
      {"--sync-type", "TEXT", A::ignore, "the sync type is a property of an IPU partition, and popdist creates none"},
      {"--executable-cache-path", "DIR", A::keep,
       "kept: exported to every instance as POPDIST_EXECUTABLE_CACHE_PATH (read by IPU TensorFlow and PopDist "
       "users)"},
      {"--host-subnet", "CIDR", A::keep,
       "kept: Open MPI talks over that subnet (--mca btl_tcp_if_include and oob_tcp_if_include)"},
      {"--synchronise-python-venv", "yes|no", A::ignore, kNoCopies},
      {"--synchronise-poplar-sdk", "yes|no", A::ignore, kNoCopies},
      {"--distribute-ssh-key", "yes|no", A::ignore, "popdist copies no ssh key: the hosts need password-less ssh"},
      {"--offline-mode", "yes|no", A::ignore, "popdist attaches no IPUs, so every run is offline"},
  };
  return options;
}

void add_poprun_ipu_options(CLI::App& sub, RunOptions& options) {
  for (const PopRunOption& entry : poprun_ipu_options()) {
    const std::string name(entry.name);
    const PopRunOption* const known = &entry;
    auto* option = sub.add_option_function<std::string>(name, [known, name, &options](const std::string& value) {
      if (known->answer == PopRunAnswer::ignore) {
        options.notices.push_back(
            {Notice::Kind::ignored, fmt::format("{} {} ({})", name, shown(value.empty() ? "yes" : value), known->why)});
      } else if (name == "--executable-cache-path") {
        options.executable_cache_path = value;
      } else if (name == "--num-ilds") {
        options.num_ilds = parse_whole_number(name, value, 1, INT_MAX);
      } else if (name == "--host-subnet") {
        options.host_subnet = value;
      }
    });
    option->group("PopRun's IPU options (popdist manages no IPUs)")
        ->description(std::string(entry.answer == PopRunAnswer::ignore ? "Ignored: " : "") + std::string(entry.why))
        ->type_name(std::string(entry.value))
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    check_value(*option, entry.value);
    if (entry.answer == PopRunAnswer::refuse) {
      // A validator, so that it is reported like any bad value: "--import-config: 'f': refused: ...".
      const std::string why(entry.why);
      option->check(CLI::Validator([why](std::string& value) { return fmt::format("{}: {}", shown(value), why); }, ""));
    }
  }
}

}  // namespace popdist::cli
