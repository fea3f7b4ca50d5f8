#pragma once
// How each instance ended, written where `popdist run` can read it even when mpirun cannot tell.
// mpirun reaps an instance the moment it ends; if mpirun then hangs in its own teardown (Open
// MPI 4.1, when an instance dies while the others are still starting MPI), `popdist run` has to
// end mpirun and report a status itself, and the first instance to fail -- whose status mpirun
// would have reported -- is already gone from /proc. So each instance's `_whole-lines` wrapper,
// which waits for its program anyway, records the program's status and when it ended in a file of
// a directory that `popdist run` made for the job, and `popdist run` reads them.
// Only instances on this machine (fake hosts included) write where it can read.

#include <optional>
#include <string>

namespace popdist::cli {

/// A wait status as a shell reports it: the exit code, or 128 + the signal that ended the process.
[[nodiscard]] int shell_status(int wait_status);

/// A directory for the job's status files, under $TMPDIR (else /tmp), removed with its files
/// when this object is destroyed. Empty path when it could not be made (then nothing is recorded).
class InstanceStatusDirectory {
 public:
  InstanceStatusDirectory();
  ~InstanceStatusDirectory();
  InstanceStatusDirectory(const InstanceStatusDirectory&) = delete;
  InstanceStatusDirectory& operator=(const InstanceStatusDirectory&) = delete;

  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// The file in which instance `index` records its status.
[[nodiscard]] std::string instance_status_file(const std::string& directory, int index);

/// Records `status` (as a shell reports it) and the time now in `file`; best effort (an instance
/// on another host has no such directory, and nothing must stop it from ending as it would).
void record_instance_status(const std::string& file, int status);

/// The status of the instance that ended first with a non-zero status, among those recorded in
/// `directory`; nullopt when none did (or nothing was recorded).
[[nodiscard]] std::optional<int> first_recorded_failure(const std::string& directory);

}  // namespace popdist::cli
