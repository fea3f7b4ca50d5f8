#include "run/supervise/attempt_end.hpp"

#include <algorithm>

#include "run/supervise/watch.hpp"  // kLostHostStatus

namespace popdist::cli {
namespace {

/// The instances whose agents spoke and never said how they ended.
std::vector<UnreportedInstance> unreported_instances(const LaunchPlan& plan, const Hearing& hearing, bool in_teardown) {
  std::vector<UnreportedInstance> unreported;
  for (const auto& record : hearing.records) {
    const auto index = static_cast<std::size_t>(record.index);
    if (record.status || record.host.empty() || index >= plan.instances.size()) continue;
    unreported.push_back(
        {record.index, plan.hosts[static_cast<std::size_t>(plan.instances[index].host)].name, in_teardown});
  }
  return unreported;
}

}  // namespace

AttemptEnd judge_attempt_end(int mpirun_status, const LaunchPlan& plan, const Hearing& hearing,
                             std::chrono::milliseconds limit) {
  AttemptEnd end{mpirun_status, lost_hosts(Moment::mpirun_ended, plan, hearing, limit), {}};
  if (!end.lost.empty()) {
    end.status = kLostHostStatus;
    return end;
  }
  if (mpirun_status != 0) {  // mpirun's own report of a failure stands; the silent were torn down
    end.unreported = unreported_instances(plan, hearing, true);
    return end;
  }
  // A lost host would have been found above: these are on hosts that are not lost.
  const auto& records = hearing.records;
  const bool failed =
      std::any_of(records.begin(), records.end(), [](const InstanceRecord& r) { return r.status && *r.status != 0; });
  end.unreported = unreported_instances(plan, hearing, false);
  if (failed || !end.unreported.empty()) end.status = 1;
  return end;
}

}  // namespace popdist::cli
