#pragma once
// PopRun's --print-topology table: rows of hosts, instances, replicas and the devices of each
// replica, each cell spanning the cells below it, drawn by the box renderer `popdist topology`
// uses too. Large jobs are shown by ranges (a column per instance or per host). Pure.

#include <string>

#include "job/launch_plan.hpp"

namespace popdist::cli {

/// The table, lines separated by '\n' (ends with one).
[[nodiscard]] std::string topology_table(const LaunchPlan& plan);

}  // namespace popdist::cli
