// `popdist run` as CLI11 sees it: the subcommand and its options (PopRun's option names, defaults
// and value words); what runs once they are parsed is in run/run_main.cpp.
#include "run/options/run_command.hpp"

#include <algorithm>
#include <memory>

#include "common/argument_checks.hpp"
#include "job/run_limits.hpp"
#include "popdist/environment.hpp"
#include "popdist/version.hpp"
#include "run/options/poprun_ipu_options.hpp"
#include "run/run_main.hpp"

namespace popdist::cli {
namespace {

// A PopRun boolean option: `--name yes|no|...`, `--name=VALUE`, or bare `--name` for yes.
void add_switch(CLI::App& sub, const std::string& name, bool& flag, const std::string& description) {
  // The validator runs first, so the callback sees only a valid word or "" (the bare option).
  sub.add_option_function<std::string>(
         name, [name, &flag](const std::string& value) { flag = value.empty() || parse_switch(name, value); },
         description)
      ->expected(0, 1)
      ->check(switch_word())
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)
      ->type_name("yes|no");
}

// docs/guide/long-jobs.md: restarts, logs, the stall report, the end of a job.
void add_long_job_options(CLI::App& sub, RunOptions& options) {
  const auto last = CLI::MultiOptionPolicy::TakeLast;
  sub.add_option("--max-restarts", options.max_restarts,
                 "Restart the whole job up to N times after an instance fails (not after Ctrl-C or SIGTERM)")
      ->check(whole_number(0, kMaxRestarts))
      ->multi_option_policy(last)
      ->capture_default_str();
  sub.add_option("--log-dir", options.log_dir,
                 "Write each instance's stdout and stderr to DIR/attempt_K/INSTANCE/{stdout,stderr}.log instead of "
                 "the terminal")
      ->check(not_empty())
      ->type_name("DIR")
      ->multi_option_policy(last);
  sub.add_flag("--tee", options.tee, "With --log-dir, also print the output (tagged)");
  sub.add_option("--stall-timeout", options.stall_timeout,
                 "After S seconds without output from any instance, print where every Python instance is and end "
                 "the job (exit status 125) [default: off]")
      ->check(positive_seconds())
      ->type_name("S")
      ->multi_option_policy(last);
  sub.add_flag("--stall-keep-running", options.stall_keep_running,
               "With --stall-timeout, print the report but keep the job running");
  sub.add_option("--report-file", options.report_file,
                 "Write how the job ended (status, and per failed instance its host, status and last error lines) "
                 "to FILE as JSON, after every attempt")
      ->check(not_empty())
      ->type_name("FILE")
      ->multi_option_policy(last);
  sub.add_option("--host-timeout", options.host_timeout,
                 "A host whose agents are not heard from for S seconds is lost: the attempt ends at once and the "
                 "report names the host (exit status 122); 0: off")
      ->check(seconds_or_zero())
      ->type_name("S")
      ->multi_option_policy(last)
      ->capture_default_str();
  sub.add_option("--min-instances", options.min_instances,
                 "With --max-restarts, a lost host is left out and the next attempt runs on the hosts left (same "
                 "instances per host and replicas per instance) while at least M instances remain [default: never "
                 "shrink]")
      ->check(whole_number(1, kMaxInstances))
      ->type_name("M")
      ->multi_option_policy(last);
  sub.add_option("--grace-period", options.grace_period,
                 "Seconds between the SIGTERM that ends an instance and the SIGKILL if it is still there (mpirun waits "
                 "this long at every teardown)")
      ->check(whole_number(1, kMaxGracePeriod))
      ->multi_option_policy(last)
      ->capture_default_str();
}

// docs/guide/launchers.md. Not --launcher: POPDIST_LAUNCHER names the family a process detects.
void add_backend_option(CLI::App& sub, RunOptions& options) {
  sub.add_option_function<std::string>(
         "--backend", [&options](const std::string& word) { options.backend = *parse_backend_choice(word); },
         "The launcher popdist run drives, told by its --version: auto (mpirun, else mpiexec, else srun, on PATH), openmpi "
         "(Open MPI's mpirun), hydra (MPICH's or Intel MPI's mpiexec), srun (Slurm's) [default: auto]")
      ->check(CLI::IsMember({"auto", "openmpi", "hydra", "srun"}))
      ->type_name("auto|openmpi|hydra|srun")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

}  // namespace

void add_run_options(CLI::App& sub, RunOptions& options) {
  sub.footer(
      "Example: popdist run --num-instances 2 --num-replicas 4 --host node[0-1] python3 train.py\n"
      "The program starts at the first word that is not an option (or after '--').\n"
      "Starts one mpirun (or hydra's mpiexec: --backend); every instance gets POPDIST_NUM_TOTAL_REPLICAS, POPDIST_NUM_LOCAL_REPLICAS,\n"
      "POPDIST_REPLICA_INDEX_OFFSET, POPDIST_NUM_IPUS_PER_REPLICA, POPDIST_UNIFORM_REPLICAS_PER_INSTANCE\n"
      "and POPDIST_LOCAL_INSTANCE_INDEX, and torchrun's RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,\n"
      "GROUP_RANK, GROUP_WORLD_SIZE, MASTER_ADDR and MASTER_PORT. Inside a Slurm allocation the allocation's nodes are the hosts.\n"
      "Exit status: the job's (non-zero when any instance failed); 2 usage error; 122 a host was lost\n"
      "(--host-timeout); 125 stalled (--stall-timeout); 127 no launcher of --backend on PATH.");
  // PopRun's command line: `poprun [options] program [args]`. Everything from the first positional
  // word on is the program's, options included.
  sub.positionals_at_end();
  const auto last = CLI::MultiOptionPolicy::TakeLast;
  sub.add_option("--num-instances", options.num_instances, "The number of instances (processes)")
      ->check(whole_number(1, kMaxInstances))
      ->multi_option_policy(last)
      ->capture_default_str();
  sub.add_option("--num-replicas", options.num_replicas,
                 "The total number of replicas, divided evenly among instances [default: one per instance]")
      ->check(whole_number(1, kMaxReplicas))
      ->multi_option_policy(last);
  sub.add_option("--ipus-per-replica", options.ipus_per_replica, "The number of devices (IPUs) per replica")
      ->check(whole_number(1, kMaxIpusPerReplica))
      ->multi_option_policy(last)
      ->capture_default_str();
  auto* host = sub.add_option("-H,--host", options.host_lists,
                              "Hosts to run on, e.g. host0,host1 or host[0-2,4] or host0:4; instances are divided "
                              "evenly among them")
                   ->check(not_empty())
                   ->allow_extra_args(false);
  sub.add_option("--hostfile", options.hostfile, "A file of hosts (Open MPI format: 'name slots=N', # comments)")
      ->check(regular_file(false))
      ->type_name("FILE")
      ->multi_option_policy(last)
      ->excludes(host);
  add_switch(sub, "--print-topology", options.print_topology,
             "Print the topology table (hosts, instances, replicas, devices); bare or yes/no");
  sub.add_option("--only-output-from-instance", options.only_output_from_instance,
                 "Show only this instance's output (hides errors from the others!)")
      ->check(whole_number(0, kMaxInstances - 1))
      ->multi_option_policy(last);
  sub.add_option("--mpi-global-args", options.mpi_global_args,
                 "The launcher's own global options (repeatable), split like a shell, e.g. \"--mca "
                 "btl_tcp_if_include eth0\" (Open MPI), \"-iface eth0\" (hydra)")
      ->allow_extra_args(false);
  sub.add_option("--mpi-local-args", options.mpi_local_args,
                 "The launcher's own options for every instance (repeatable), e.g. \"-x MY_VAR\" (Open MPI), "
                 "\"-env MY_VAR 1\" (hydra)")
      ->allow_extra_args(false);
  add_switch(sub, "--numa-aware", options.numa_aware,
             "Bind instances to NUMA nodes round-robin (--map-by numa --bind-to numa); bare or yes/no");
  sub.add_flag("--dry-run", options.dry_run,
               "Print the launcher's command that would run (the job directory as its name's template, "
               "$TMPDIR/popdist-run-XXXXXX) and each instance's variables; start nothing");
  sub.add_flag("-v,--verbose", options.verbosity, "Say what was decided (-vv: also print the command)");
  sub.add_flag_callback("--vv", [&options] { options.verbosity = std::max(options.verbosity, 2); }, "Very verbose");
  // PopRun's --version (its --version-format is among the ignored options)
  sub.set_version_flag("--version", std::string("popdist run (popdist ") + popdist::version() + ")");
  sub.add_option("--master-addr", options.master_addr,
                 "torchrun's MASTER_ADDR for every instance [default: your MASTER_ADDR, else 127.0.0.1 on one host, "
                 "else the first host's address]")
      ->multi_option_policy(last);
  sub.add_option("--master-port", options.master_port,
                 "torchrun's MASTER_PORT for every instance [default: your MASTER_PORT, else a port free on this "
                 "machine]")
      ->check(whole_number(1, 65535))
      ->multi_option_policy(last);
  add_long_job_options(sub, options);
  add_backend_option(sub, options);
  add_poprun_ipu_options(sub, options);
  sub.add_option("program", options.program, "The program and its arguments (from the first non-option word, or after --)");
}


std::function<int()> add_run_command(CLI::App& app) {
  auto* sub = app.add_subcommand("run", "Launch instances with one mpirun (PopRun-like): popdist run [options] program [args...]");
  auto options = std::make_shared<RunOptions>();
  add_run_options(*sub, *options);
  return [options] {
    return run_job(*options, process_environment());
  };
}

}  // namespace popdist::cli
