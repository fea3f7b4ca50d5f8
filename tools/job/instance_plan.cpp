#include "job/instance_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "common/argument_text.hpp"
#include "popdist/error.hpp"

namespace popdist::cli {
namespace {

// The comma-separated positive counts of `text`; empty when any word is not one.
std::vector<int> counts_in(const std::string& text) {
  std::vector<int> counts;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    int value = 0;
    const char* first = text.data() + start;
    const char* last = text.data() + comma;
    const auto [next, error] = std::from_chars(first, last, value);
    if (error != std::errc() || next != last || value < 1) return {};
    counts.push_back(value);
    start = comma + 1;
  }
  return counts;
}

}  // namespace

std::string plan_argument(const LaunchPlan& plan) {
  return fmt::format("{},{},{},{}", plan.num_instances, plan.num_total_replicas, plan.ipus_per_replica,
                     plan.hosts.size());
}

LaunchPlan plan_from_argument(const std::string& text) {
  const auto counts = counts_in(text);
  if (counts.size() != 4 || counts[1] % counts[0] != 0 || counts[0] % counts[3] != 0) {
    throw UsageError(fmt::format("--plan {}: expected instances,replicas,devices per replica,hosts (positive counts, "
                                 "replicas divisible by instances, instances by hosts)",
                                 shown(text)));
  }
  std::vector<HostSpec> hosts;
  for (int host = 0; host < counts[3]; ++host) hosts.push_back({fmt::format("host{}", host), std::nullopt});
  return plan_launch(counts[0], counts[1], counts[2], hosts);
}

std::vector<std::pair<std::string, std::string>> instance_variables(const LaunchPlan& plan, int index) {
  auto variables = popdist_variables(plan, index);
  for (auto& [name, value] : torchrun_variables(plan, index, "", 0)) {
    if (name != "MASTER_ADDR" && name != "MASTER_PORT") variables.emplace_back(std::move(name), std::move(value));
  }
  return variables;
}

int default_omp_threads(int host_cores, int local_instances) {
  return std::max(1, host_cores / std::max(1, local_instances));
}

}  // namespace popdist::cli
