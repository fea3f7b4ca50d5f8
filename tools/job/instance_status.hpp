#pragma once
// The job directory: where each instance's agent records how its instance ended, so that
// `popdist run` can report it even when mpirun cannot tell. mpirun reaps an instance the moment
// it ends; if mpirun then hangs in its own teardown (Open MPI 4.1, when an instance dies while the
// others are still starting MPI), `popdist run` has to end mpirun and report a status itself, and
// the failure report (run/report/failure_report.hpp) names each failed instance's host, status, time and
// last error lines. One directory per attempt, made by `popdist run` under $TMPDIR and exported
// to the instances as POPDIST_RUN_JOB_DIR. Only instances on this machine (fake hosts included)
// write where it can read; the others' records are simply missing.
//
// Files, per instance i: instance<i>.end ("status ended_ns host"), instance<i>.stderr (the last
// lines of its stderr), instance<i>.error.json (torch's TORCHELASTIC_ERROR_FILE), instance<i>.alive
// (touched when the instance writes output: the stall watch reads its time).

#include <optional>
#include <string>
#include <vector>

namespace popdist::cli {

/// A wait status as a shell reports it: the exit code, or 128 + the signal that ended the process.
[[nodiscard]] int shell_status(int wait_status);

/// Where an attempt's job directory is made: `$TMPDIR/popdist-run-XXXXXX` (else under /tmp), the X's
/// made unique at run time; --dry-run prints it as it is.
[[nodiscard]] std::string job_directory_template();

/// A job directory under $TMPDIR (else /tmp), removed with its files when this object is
/// destroyed. Empty path when it could not be made (then nothing is recorded).
class JobDirectory {
 public:
  JobDirectory();
  ~JobDirectory();
  JobDirectory(const JobDirectory&) = delete;
  JobDirectory& operator=(const JobDirectory&) = delete;

  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// `<directory>/instance<index><suffix>`.
[[nodiscard]] std::string instance_file(const std::string& directory, int index, const std::string& suffix);

/// The file in which instance `index` records how it ended.
[[nodiscard]] std::string instance_status_file(const std::string& directory, int index);

/// Records `status` (as a shell reports it), the time now and `host` in `file`; best effort (an
/// instance on another host has no such directory, and nothing must stop it from ending as it would).
void record_instance_status(const std::string& file, int status, const std::string& host = "");

/// How one instance ended, as recorded.
struct InstanceEnd {
  int index = 0;
  int status = 0;              ///< as a shell reports it
  long long ended_ns = 0;      ///< wall clock, ns since the epoch
  std::string host;
};

/// Every instance's record in `directory`, first to end first.
[[nodiscard]] std::vector<InstanceEnd> recorded_ends(const std::string& directory);

/// The status of the instance that ended first with a non-zero status, among those recorded in
/// `directory`; nullopt when none did (or nothing was recorded).
[[nodiscard]] std::optional<int> first_recorded_failure(const std::string& directory);

}  // namespace popdist::cli
