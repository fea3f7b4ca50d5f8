// Slurm's tasks-per-node lists (SLURM_STEP_TASKS_PER_NODE=2(x3),1): the parser over fuzz bytes,
// then lookups of the first, the last and an out-of-range node, whose counts must agree with
// the totals the parser reports.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "fuzz_input.hpp"
#include "popdist/error.hpp"
#include "popdist/slurm_tasks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const popdist::SlurmTasksPerNode tasks("SLURM_STEP_TASKS_PER_NODE", popdist::fuzz::as_text(data, size));
    if (tasks.num_nodes() < 1 || tasks.num_tasks() < tasks.num_nodes()) std::abort();  // C >= 1 on every node
    if (tasks.tasks_on_node(0) < 1 || tasks.tasks_on_node(tasks.num_nodes() - 1) < 1) std::abort();
    (void)tasks.tasks_on_node(tasks.num_nodes());  // must throw
    std::abort();
  } catch (const popdist::EnvironmentError&) {
  }
  return 0;
}
