// `popdist _instance` as CLI11 sees it: the options that run/launch/mpirun_command.cpp writes.
#include "agent/instance_command.hpp"

#include <memory>

#include "agent/instance_agent.hpp"
#include "job/agent_line.hpp"

namespace popdist::cli {

std::function<int()> add_instance_command(CLI::App& app) {
  auto* sub = app.add_subcommand(kInstanceCommand, "Run one instance of a popdist run job (instance_agent.hpp)");
  sub->group("");  // hidden: only `popdist run` writes it, on the instances' command line
  sub->positionals_at_end();
  auto options = std::make_shared<AgentOptions>();
  sub->add_option("--plan", options->plan, "instances,replicas,devices per replica,hosts")->required();
  sub->add_option("--job-dir", options->job_dir, "Where to record how the program ended");
  sub->add_option("--log-dir", options->log_dir, "This attempt's log folder");
  sub->add_flag("--tee", options->tee, "With --log-dir, show the output too");
  sub->add_option("--output-from", options->output_from, "Show only this instance's output");
  sub->add_flag("--omp-threads", options->omp_threads, "Set OMP_NUM_THREADS when unset");
  sub->add_flag("--tag-output", options->tag_output, "Start each line shown with [1,instance]<stdout>:");
  sub->add_option("--colons", options->colons, "Positions of ':' in the program");
  sub->add_option("program", options->program, "The program and its arguments")->required();
  return [options] { return run_instance(*options); };
}

}  // namespace popdist::cli
