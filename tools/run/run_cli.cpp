#include "run_cli.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "popdist/error.hpp"
#include "shell_words.hpp"

namespace popdist::cli {

void add_run_options(CLI::App& sub, RunOptions& options) {
  sub.footer(
      "Example: popdist run --num-instances 2 --num-replicas 4 --host node[0-1] -- python3 train.py\n"
      "Starts one mpirun; every instance gets POPDIST_NUM_TOTAL_REPLICAS, POPDIST_NUM_LOCAL_REPLICAS,\n"
      "POPDIST_REPLICA_INDEX_OFFSET, POPDIST_NUM_IPUS_PER_REPLICA, POPDIST_UNIFORM_REPLICAS_PER_INSTANCE\n"
      "and POPDIST_LOCAL_INSTANCE_INDEX. Inside a Slurm allocation the allocation's nodes are the hosts.\n"
      "Exit status: the job's (non-zero when any instance failed); 2 usage error; 127 mpirun not on PATH.");
  sub.add_option("--num-instances", options.num_instances, "The number of instances (processes)")
      ->capture_default_str();
  sub.add_option("--num-replicas", options.num_replicas,
                 "The total number of replicas, divided evenly among instances [default: one per instance]");
  sub.add_option("--ipus-per-replica", options.ipus_per_replica, "The number of devices (IPUs) per replica")
      ->capture_default_str();
  auto* host = sub.add_option("-H,--host", options.host_lists,
                              "Hosts to run on, e.g. host0,host1 or host[0-2,4] or host0:4; instances are divided "
                              "evenly among them")
                   ->allow_extra_args(false);
  sub.add_option("--hostfile", options.hostfile, "A file of hosts (Open MPI format: 'name slots=N', # comments)")
      ->excludes(host);
  sub.add_flag("--print-topology", options.print_topology, "Print the topology table (hosts, instances, replicas, devices)");
  sub.add_option("--only-output-from-instance", options.only_output_from_instance,
                 "Show only this instance's output (hides errors from the others!)");
  sub.add_option("--mpi-global-args", options.mpi_global_args,
                 "Options for mpirun before the app contexts, split like a shell, e.g. \"--mca btl_tcp_if_include eth0\"")
      ->allow_extra_args(false);
  sub.add_option("--mpi-local-args", options.mpi_local_args,
                 "Options for mpirun in every instance's app context (repeatable), e.g. \"-x MY_VAR\"")
      ->allow_extra_args(false);
  sub.add_flag("--numa-aware", options.numa_aware, "Bind instances to NUMA nodes round-robin (--map-by numa --bind-to numa)");
  sub.add_flag("--dry-run", options.dry_run, "Print the mpirun command and each instance's variables; start nothing");
  sub.add_flag("-v,--verbose", options.verbosity, "Say what was decided (-vv: also print the command)");
  sub.add_flag_callback("--vv", [&options] { options.verbosity = std::max(options.verbosity, 2); }, "Very verbose");
  sub.add_option("program", options.program, "The program and its arguments, after --");
}

void check_program_after_separator(const CLI::App& sub, const RunOptions& options) {
  if (options.program.empty()) return;  // validate_options reports the missing program
  // CLI11 (2.x) keeps the `--` separator in remaining() when it ends the options of a subcommand
  // with positionals; without it, the words came before any `--`.
  const auto remaining = sub.remaining();
  if (std::find(remaining.begin(), remaining.end(), "--") == remaining.end()) {
    throw UsageError(fmt::format("'{}' is not an option of popdist run: put the program after '--' (popdist run "
                                 "[options] -- program [args...])",
                                 shell_join(options.program)));
  }
}

}  // namespace popdist::cli
