#include "popdist/slurm_tasks.hpp"

#include <fmt/format.h>

#include "core/numbers.hpp"
#include "popdist/error.hpp"

namespace popdist {
namespace {

using detail::Expect;
using detail::parse_decimal;
using detail::printable;

constexpr std::string_view kExpectedForm =
    "a comma-separated list of task counts, each 'C' or 'C(xR)' (C tasks on each of R nodes), e.g. '2(x3),1'";

}  // namespace

SlurmTasksPerNode::SlurmTasksPerNode(std::string_view name, std::string_view value)
    : name_(name), value_(printable(value)) {
  const auto fail = [&](std::string_view item, std::string_view problem) {
    throw EnvironmentError(
        fmt::format("{}='{}': item '{}' {}; expected {}", name_, value_, printable(item), problem, kExpectedForm));
  };
  if (value.empty()) {
    throw EnvironmentError(fmt::format("{}='' is empty; expected {}", name_, kExpectedForm));
  }
  std::size_t start = 0;
  while (true) {
    const auto comma = value.find(',', start);
    const auto item = value.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (item.empty()) fail(item, "is empty");
    TaskRun run;
    const auto paren = item.find('(');
    std::string_view count_text = item.substr(0, paren);
    if (paren != std::string_view::npos) {
      // "C(xR)": the repeat must be exactly "(x" digits ")" and close the item.
      const auto repeat_part = item.substr(paren);
      if (repeat_part.size() < 4 || repeat_part.substr(0, 2) != "(x" || repeat_part.back() != ')') {
        fail(item, "has a malformed repeat (expected '(xR)' after the count)");
      }
      const auto repeat_text = repeat_part.substr(2, repeat_part.size() - 3);
      try {
        run.repeat = parse_decimal(name_, repeat_text, Expect::Positive);
      } catch (const EnvironmentError&) {
        fail(item, fmt::format("has a bad repeat '{}' ({})", printable(repeat_text),
                               describe_expectation(Expect::Positive)));
      }
    }
    try {
      run.count = parse_decimal(name_, count_text, Expect::Positive);
    } catch (const EnvironmentError&) {
      fail(item, fmt::format("has a bad task count '{}' ({})", printable(count_text),
                             describe_expectation(Expect::Positive)));
    }
    runs_.push_back(run);
    num_nodes_ += run.repeat;
    num_tasks_ += static_cast<std::int64_t>(run.count) * run.repeat;
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
}

int SlurmTasksPerNode::tasks_on_node(std::int64_t node) const {
  if (node >= 0) {
    std::int64_t first = 0;
    for (const auto& run : runs_) {
      if (node < first + run.repeat) return run.count;
      first += run.repeat;
    }
  }
  throw EnvironmentError(fmt::format("{}='{}' describes {} node(s), so it has no node {}; expected a node index "
                                     "in 0..{}",
                                     name_, value_, num_nodes_, node, num_nodes_ - 1));
}

}  // namespace popdist
