#include "run/plan/replan.hpp"

#include "run/plan/master_endpoint.hpp"

namespace popdist::cli {

NextAttempt replan_without(PreparedJob& job, const std::set<std::string>& left_out, const EnvLookup& env) {
  auto next = next_attempt(job.options, job.selection->hosts, left_out);
  if (!next.refusal.empty()) return next;
  job.options = with_counts(job.options, next);
  job.selection->hosts = next.hosts;
  job.plan = plan_launch(next.num_instances, next.num_replicas, job.options.ipus_per_replica, next.hosts);
  const MasterEndpoint master = choose_master(job.plan, job.options, env, real_network());
  job.context.master_addr = master.address;
  job.context.master_port = master.port;
  job.channel_address = choose_channel_address(job.plan, real_network());
  return next;
}

}  // namespace popdist::cli
