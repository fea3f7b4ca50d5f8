#include "poprun_ipu_options.hpp"

#include <fmt/format.h>

#include "argument_checks.hpp"
#include "argument_text.hpp"

namespace popdist::cli {
namespace {

enum class Answer {
  Refuse,  ///< asks for IPU resources popdist cannot provide: an error
  Warn,    ///< has no effect without V-IPU: accepted with a warning
};

struct IpuOption {
  const char* name;
  bool is_switch;  ///< takes PopRun's yes/no words
  Answer answer;
  const char* why;
};

// PopRun's option list (PopRun user guide, "PopRun features"), the IPU and configuration part.
constexpr IpuOption ipu_options[] = {
    {"--vipu-partition", false, Answer::Refuse, "popdist does not manage IPU partitions (it starts no V-IPU client)"},
    {"--vipu-server-host", false, Answer::Refuse, "popdist does not manage IPU partitions (it talks to no V-IPU server)"},
    {"--vipu-cluster", false, Answer::Refuse, "popdist does not manage IPU partitions (it creates none in a V-IPU cluster)"},
    {"--vipu-allocation", false, Answer::Refuse, "popdist does not manage IPU partitions (it creates none in a V-IPU allocation)"},
    {"--num-ilds", false, Answer::Refuse, "popdist does not manage IPU partitions or IPU-Link domains"},
    {"--import-config", false, Answer::Refuse, "popdist run reads no PopRun configuration file; give the options on the command line"},
    {"--export-config", false, Answer::Refuse, "popdist run writes no PopRun configuration file"},
    {"--vipu-server-port", false, Answer::Warn, "ignored: popdist talks to no V-IPU server"},
    {"--vipu-server-timeout", false, Answer::Warn, "ignored: popdist talks to no V-IPU server"},
    {"--vipu-partition-attempts", false, Answer::Warn, "ignored: popdist binds to no IPU partition"},
    {"--update-partition", true, Answer::Warn, "ignored: popdist manages no IPU partition to update"},
    {"--reset-partition", true, Answer::Warn, "ignored: popdist manages no IPU partition to reset"},
    {"--remove-partition", true, Answer::Warn, "ignored: popdist creates no IPU partition to remove"},
    {"--offline-mode", true, Answer::Warn, "ignored: popdist never attaches to IPUs, so every run is offline"},
    {"--executable-cache-path", false, Answer::Warn,
     "ignored: popdist does not configure Poplar's executable cache; set it in your program's options"},
    {"--overwrite-config", true, Answer::Warn, "ignored: popdist run writes no configuration file"},
};

}  // namespace

void add_poprun_ipu_options(CLI::App& sub, RunOptions& options) {
  for (const IpuOption& ipu : ipu_options) {
    const std::string name = ipu.name;
    const std::string why = ipu.why;
    auto* option = sub.add_option_function<std::string>(
        name, [name, why, &options](const std::string& value) {
          options.warnings.push_back(fmt::format("{} {}: {}", name, shown(value.empty() ? "yes" : value), why));
        });
    option->group("PopRun IPU options (recognized; popdist manages no IPUs)")
        ->description(std::string(ipu.answer == Answer::Refuse ? "Refused: " : "") + why)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    if (ipu.is_switch) {
      option->expected(0, 1)->check(switch_word())->type_name("yes|no");
    } else {
      option->check(not_empty());
    }
    if (ipu.answer == Answer::Refuse) {
      // A validator, so that CLI11 reports it like any bad value: "--vipu-partition: 'p': ...".
      option->check(CLI::Validator(
          [why](std::string& value) {
            return fmt::format("{}: {}; remove the option (popdist runs the instances on the hosts you give and sets "
                               "POPDIST_* for them)",
                               shown(value), why);
          },
          ""));
    }
  }
}

}  // namespace popdist::cli
