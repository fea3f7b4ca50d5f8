#pragma once
// The one block a failed job ends with (design.md §12): per failed instance its index, host,
// status or signal by name (with what it likely means), the time since the start, and its last
// error lines -- the exception that torch's @record wrote to TORCHELASTIC_ERROR_FILE when there is
// one, else the tail of its stderr -- first failure first. Instances that the job's teardown
// stopped after the first failure share one line. Nothing is printed on success.

#include <string>
#include <vector>

#include "job/instance_status.hpp"

namespace popdist::cli {

/// A failed instance, as the report shows it.
struct Failure {
  InstanceEnd end;
  std::string error_lines;  ///< the exception or the stderr tail; may be empty
  std::string error_source; ///< "torch error file" or "stderr"
};

/// "exit code 3", or "SIGKILL (signal 9: ...likely meaning...)" for 128 + a signal.
[[nodiscard]] std::string describe_status(int status);

/// True when `failure` (not the first) is the job's teardown ending the instance after `first`.
[[nodiscard]] bool stopped_by_teardown(const Failure& failure, const Failure& first);

/// The traceback (else the message) in the JSON that torch.distributed.elastic's @record writes;
/// empty when the text holds neither.
[[nodiscard]] std::string torch_error_text(const std::string& json);

/// The failures recorded in `job_dir`, first first, with their error lines.
[[nodiscard]] std::vector<Failure> recorded_failures(const std::string& job_dir);

/// The block. `start_ns` is the job's start (wall clock); `attempt` counts from 0 and
/// `attempts` is 1 + --max-restarts; `status` is the job's.
[[nodiscard]] std::string failure_report(const std::vector<Failure>& failures, long long start_ns, int attempt,
                                         int attempts, int status);

}  // namespace popdist::cli
