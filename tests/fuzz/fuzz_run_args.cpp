// `popdist run`'s argument handling: NUL-separated words parsed as `popdist run <words>` by the
// real option declarations (CLI11), then everything the command does before it starts mpirun:
// validation, the hosts (--host; a --hostfile is dropped, the hostfile harness covers its
// contents), the plan, the mpirun command and the --print-topology table. Every outcome must
// be success, a CLI11 parse error or a UsageError. First the same words through parse_run_line
// (run_line.hpp), which reads a line option by option and must never throw.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "fuzz_input.hpp"
#include "job/launch_plan.hpp"
#include "popdist/error.hpp"
#include "run/launch/mpirun_command.hpp"
#include "run/options/run_command.hpp"
#include "run/options/run_line.hpp"
#include "run/options/validation.hpp"
#include "run/plan/host_source.hpp"
#include "run/plan/topology_table.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace popdist::cli;
  auto args = popdist::fuzz::words_from(popdist::fuzz::as_text(data, size));
  (void)parse_run_line(args);
  CLI::App app{"fuzz"};
  auto* sub = app.add_subcommand("run");
  RunOptions options;
  add_run_options(*sub, options);
  args.insert(args.begin(), "run");
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments reversed
  try {
    app.parse(args);
    options.hostfile.clear();
    validate_options(options);
    const auto selection = select_hosts(options, popdist::lookup_in({}));
    validate_hosts(options, selection.hosts, selection.source);
    const auto plan = plan_launch(options.num_instances, total_replicas(options), options.ipus_per_replica,
                                  selection.hosts);
    (void)build_mpirun_command(plan, options, MpirunContext{});
    if (options.print_topology) (void)topology_table(plan);
  } catch (const CLI::ParseError&) {
  } catch (const popdist::UsageError&) {
  }
  return 0;
}
