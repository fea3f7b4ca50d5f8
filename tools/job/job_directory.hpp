#pragma once
// The job directory: what an attempt keeps on each host's own disk. `popdist run` makes one per
// attempt under its $TMPDIR (mkdtemp, 0700) and exports it as POPDIST_RUN_JOB_DIR; on another host
// the agents make the same path if it is missing (a node-local /tmp) and remove it at their end
// (agent/host_job_directory.hpp). Nothing in it crosses
// hosts: how an instance ended, its output and its stacks reach popdist run over the job's channel
// (tools/channel). Files, per instance i, on i's host: instance<i>.error.json (torch's
// TORCHELASTIC_ERROR_FILE, read by the agent), instance<i>.python and instance<i>.stacks (the
// Python start-up hook's marker and dumps, stacks/stack_report.hpp); on popdist run's machine,
// popdist-run.pid and stacks.sock (how `popdist stacks` finds and asks the job).

#include <string>

namespace popdist::cli {

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

}  // namespace popdist::cli
