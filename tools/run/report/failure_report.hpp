#pragma once
// The one block a failed job ends with (design.md §12): per failed instance its index, host,
// status or signal by name (with what it likely means), the time since the start, and its last
// error lines -- the exception that torch's @record wrote to TORCHELASTIC_ERROR_FILE when there is
// one, else the tail of its stderr -- first failure first. Instances that the job's teardown
// stopped after the first failure share one line. Nothing is printed on success. The facts come
// from every host's agents over the job's channel (run/supervise/job_records.hpp).

#include <optional>
#include <string>
#include <vector>

#include "job/torch_error_file.hpp"
#include "run/supervise/attempt_end.hpp"
#include "run/supervise/host_liveness.hpp"
#include "run/supervise/job_records.hpp"

namespace popdist::cli {

/// How one instance ended, on popdist run's clock.
struct InstanceEnd {
  int index = 0;
  int status = 0;              ///< as a shell reports it
  long long ended_ns = 0;      ///< popdist run's steady clock, ns (arrival - age)
  std::string host;
};

/// A failed instance, as the report shows it.
struct Failure {
  InstanceEnd end;
  std::string error_lines;  ///< the exception or the stderr tail; may be empty
  std::string error_source; ///< "torch error file" or "stderr"
};

/// "exit code 3", or "SIGKILL (signal 9: ...likely meaning...)" for 128 + a signal.
[[nodiscard]] std::string describe_status(int status);

/// True when `failure` (not the first) is the job's teardown ending the instance: a SIGTERM
/// (what mpirun's and popdist run's teardown send first), or a SIGKILL after `first` ended.
[[nodiscard]] bool stopped_by_teardown(const Failure& failure, const Failure& first);

/// The failed instances, root cause first: by end time on popdist run's clock, except that a
/// SIGTERM is never first while another kind of failure exists. Pure.
[[nodiscard]] std::vector<Failure> failures_in_order(const std::vector<InstanceRecord>& records);

/// The status of failures_in_order()'s first; nullopt when no instance failed.
[[nodiscard]] std::optional<int> first_failure_status(const std::vector<InstanceRecord>& records);

/// The block. With `lost` hosts (--host-timeout) it opens with a line per lost host (its
/// instances, when it was last heard from) and says "lost host" as the job's status; with
/// `unreported` instances (their agents never said how they ended: attempt_end.hpp) it names each
/// and its host after mpirun's 0, and after a failure the teardown's on one line ("no word from").
/// After a lost or unreached host, instances that all ended by SIGTERM (the teardown the loss
/// began) share one line and none is a "first failure".
/// `start_ns` is the attempt's start on popdist run's steady clock (ns); `attempt` counts from 0
/// and `attempts` is 1 + --max-restarts; `status` is the job's. `unreached`, the lines on hosts
/// that never spoke (reach_report.hpp), is the root cause when given: it comes first, and stands
/// for "see the launcher's message above".
[[nodiscard]] std::string failure_report(const std::vector<Failure>& failures, long long start_ns, int attempt,
                                         int attempts, int status, const std::vector<LostHost>& lost = {},
                                         const std::vector<UnreportedInstance>& unreported = {},
                                         const std::string& unreached = {});

}  // namespace popdist::cli
