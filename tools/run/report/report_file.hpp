#pragma once
// --report-file PATH: how each attempt ended, as JSON, for a program that starts `popdist run`
// and wants the failure report without parsing stderr (popdist.launch raises it as a LaunchError).
// The block of failure_report.hpp as text, and its facts, one object per failed instance.

#include <string>
#include <vector>

#include "run/report/failure_report.hpp"

namespace popdist::cli {

/// The outcome of one attempt, as the report file states it.
struct AttemptOutcome {
  int status = 0;             ///< the job's, as a shell reports it
  int attempt = 0;            ///< counts from 0
  int attempts = 1;           ///< 1 + --max-restarts
  bool stopped = false;       ///< a signal (Ctrl-C, SIGTERM, SIGHUP) ended the job
  long long start_ns = 0;     ///< the attempt's start, wall clock
  std::vector<LostHost> lost; ///< the hosts --host-timeout found lost
  std::vector<UnreportedInstance> unreported;  ///< these never said how they ended
  std::string unreached{};    ///< the lines on hosts that never spoke (reach_report.hpp), in "text"
};

/// The report as JSON text: {"status", "status_text", "attempt", "attempts", "stopped", "text"
/// (failure_report()'s block; empty on success), "failures": [{"instance", "host", "status", "status_text", "after_ms", "stopped_by_teardown",
/// "error_source", "error_lines"}], "lost_hosts": [{"host", "instances", "last_heard_ms"}],
/// "unreported": [{"instance", "host", "in_teardown"}]}, first failure first.
[[nodiscard]] std::string report_json(const AttemptOutcome& outcome, const std::vector<Failure>& failures);

/// Writes report_json() to `path` whole (a temporary file renamed over it, so that a reader never
/// sees half a report); a file that cannot be written is said on stderr, the job goes on.
void write_report_file(const std::string& path, const AttemptOutcome& outcome, const std::vector<Failure>& failures);

}  // namespace popdist::cli
