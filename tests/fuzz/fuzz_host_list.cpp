// Host lists: `popdist run --host` values and SLURM_JOB_NODELIST (with SLURM_TASKS_PER_NODE as
// slots). The first line of the input is the host list; the rest, NAME=VALUE lines, is the
// environment the Slurm allocation is read from.
#include <cstddef>
#include <cstdint>

#include "fuzz_input.hpp"
#include "popdist/error.hpp"
#include "run/plan/host_list.hpp"
#include "run/plan/host_source.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto text = popdist::fuzz::as_text(data, size);
  const auto first_line = text.substr(0, text.find('\n'));
  try {
    (void)popdist::cli::expand_hostlist(first_line, "SLURM_JOB_NODELIST");
  } catch (const popdist::UsageError&) {
  }
  try {
    const auto hosts = popdist::cli::parse_host_list(first_line);
    popdist::cli::check_unique_hosts(hosts, "--host");
  } catch (const popdist::UsageError&) {
  }
  try {
    (void)popdist::cli::hosts_from_slurm(popdist::lookup_in(popdist::fuzz::environment_from(text)));
  } catch (const popdist::UsageError&) {
  }
  return 0;
}
