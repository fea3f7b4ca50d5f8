#pragma once
// PopRun's options beyond the launch itself: V-IPU servers and partitions, IPU-Link domains, sync
// types, executable caches, host preparation and configuration files. popdist runs no V-IPU
// client and attaches no IPUs, so each has one of three answers (the table in docs/guide/hosts.md):
//  - kept for its meaning off IPUs (--executable-cache-path, --num-ilds, --host-subnet);
//  - ignored: accepted, its value checked as PopRun would, and named on one warning line;
//  - refused (--import-config only: its options would silently be lost).

#include <CLI/CLI.hpp>

#include <string_view>
#include <vector>

#include "run/options/run_options.hpp"

namespace popdist::cli {

/// How `popdist run` answers one of PopRun's options.
enum class PopRunAnswer { keep, ignore, refuse };

/// One of PopRun's IPU/partition options, as the table in docs/guide/hosts.md lists it.
struct PopRunOption {
  std::string_view name;
  std::string_view value;   ///< the value's form in --help ("yes|no", "N", "TEXT", "DIR", "CIDR")
  PopRunAnswer answer;
  std::string_view why;     ///< what popdist does with it
};

/// Every such option of PopRun's --help (PopRun user guide, "PopRun features"), in its order.
[[nodiscard]] const std::vector<PopRunOption>& poprun_ipu_options();

/// Declares them on `sub` (in their own help group). A bad value is a CLI11 ValidationError naming
/// the option; an ignored option appends a Notice::Kind::ignored to `options.notices`; a kept one
/// fills its field of `options`.
void add_poprun_ipu_options(CLI::App& sub, RunOptions& options);

}  // namespace popdist::cli
