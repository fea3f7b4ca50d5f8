#pragma once
/// @file slurm_tasks.hpp
// Public because both detect() (SLURM_STEP_TASKS_PER_NODE) and `popdist run` inside an
// allocation (SLURM_TASKS_PER_NODE) read these lists: one parser, one set of error messages.
//
// Slurm's compressed tasks-per-node lists, e.g. SLURM_STEP_TASKS_PER_NODE=2(x3),1: nodes 0-2
// run 2 tasks each, node 3 runs 1. HPX's batch_environments parses the same syntax.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace popdist {

/// `count` tasks on each of `repeat` consecutive nodes.
struct TaskRun {
  int count = 0;
  int repeat = 1;
};

/// A parsed tasks-per-node list; runs are kept compressed so "1(x100000)" stays small.
class SlurmTasksPerNode {
 public:
  /// Parses `value` of variable `name`: comma-separated items `C` or `C(xR)` with C >= 1, R >= 1,
  /// plain decimals. Throws EnvironmentError naming the variable, its value, the bad item and the
  /// expected form.
  SlurmTasksPerNode(std::string_view name, std::string_view value);

  [[nodiscard]] const std::vector<TaskRun>& runs() const noexcept { return runs_; }
  /// The number of nodes the list describes.
  [[nodiscard]] std::int64_t num_nodes() const noexcept { return num_nodes_; }
  /// The total number of tasks over all nodes.
  [[nodiscard]] std::int64_t num_tasks() const noexcept { return num_tasks_; }
  /// The task count of node `node` (0-based); throws EnvironmentError when out of range.
  [[nodiscard]] int tasks_on_node(std::int64_t node) const;

 private:
  std::string name_;
  std::string value_;
  std::vector<TaskRun> runs_;
  std::int64_t num_nodes_ = 0;
  std::int64_t num_tasks_ = 0;
};

}  // namespace popdist
