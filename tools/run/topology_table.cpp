#include "topology_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace popdist::cli {
namespace {

// A row: labels, each spanning `span` replica columns.
struct Row {
  std::string title;
  std::vector<std::string> labels;
  int span = 1;
};

std::string device_range(int first, int count) {
  return count == 1 ? std::to_string(first) : fmt::format("{}-{}", first, first + count - 1);
}

}  // namespace

std::string topology_table(const LaunchPlan& plan) {
  const int replicas_per_host = plan.replicas_per_instance * plan.hosts.front().num_instances;
  std::vector<Row> rows(4);
  rows[0] = {"hosts", {}, replicas_per_host};
  for (const auto& host : plan.hosts) rows[0].labels.push_back(host.name);
  rows[1] = {"instances", {}, plan.replicas_per_instance};
  for (const auto& instance : plan.instances) rows[1].labels.push_back(std::to_string(instance.index));
  rows[2] = {"replicas", {}, 1};
  rows[3] = {"devices", {}, 1};
  for (int r = 0; r < plan.num_total_replicas; ++r) {
    rows[2].labels.push_back(std::to_string(r));
    rows[3].labels.push_back(device_range(r * plan.ipus_per_replica, plan.ipus_per_replica));
  }

  // One width for every replica column, wide enough that each label fits its span with a blank
  // on either side (a span of n columns also owns the n-1 separators between them).
  std::size_t column = 1;
  std::size_t title_width = 0;
  for (const auto& row : rows) {
    title_width = std::max(title_width, row.title.size());
    for (const auto& label : row.labels) {
      const std::size_t need = label.size() + 2;
      const auto span = static_cast<std::size_t>(row.span);
      column = std::max(column, (need - std::min(need, span - 1) + span - 1) / span);
    }
  }
  const auto cells = static_cast<std::size_t>(plan.num_total_replicas);
  const std::size_t inner = title_width + 2 + cells * (column + 1);  // between the outer bars

  std::string out;
  const std::string title = "popdist topology";
  out += fmt::format(" {}\n", std::string(inner, '='));
  out += fmt::format("|{:^{}}|\n", title, inner);
  out += fmt::format("|{}|\n", std::string(inner, '='));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    const std::size_t width = static_cast<std::size_t>(row.span) * (column + 1) - 1;
    std::string line = fmt::format("| {:<{}} ", row.title, title_width);
    for (const auto& label : row.labels) line += fmt::format("|{:^{}}", label, width);
    out += line + "|\n";
    if (i + 1 < rows.size()) {
      std::string rule = "|" + std::string(title_width + 2, '-');
      for (std::size_t c = 0; c < cells; ++c) rule += "|" + std::string(column, '-');
      out += rule + "|\n";
    }
  }
  out += fmt::format(" {}\n", std::string(inner, '-'));
  return out;
}

}  // namespace popdist::cli
