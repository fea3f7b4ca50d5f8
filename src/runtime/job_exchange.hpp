#pragma once
// init()'s exchange with the other instances, one step per method: split_hosts(), screen() (one
// MPI_Exscan and one MPI_Allreduce, O(log N) messages of a few dozen bytes whatever N), and
// agree_on_failure() and gather_records() only when something is amiss. What a process receives
// does not grow with N when the job is sane (design.md §5.6); every step is bounded by the
// deadline. Why the screen never passes a job the job check would refuse:
// docs/guide/protocols.md, "init()'s exchange".

#include <mpi.h>

#include <array>
#include <cstdint>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "mpi/deadline.hpp"
#include "runtime/instance_record.hpp"

namespace popdist::detail {

/// The reduced values the screen looks at, as a pure function of each instance's inputs.
struct ScreenInput {
  bool failed = false;
  int rank = 0;
  int size = 1;
  std::int64_t replicas_before = 0;  ///< exclusive prefix sum of the local replicas
  std::int64_t offset = 0;
  std::int64_t local = 1;
  std::int64_t total = 1;
  std::int64_t ipus = 1;
  bool uniform = true;
};
using ScreenVector = std::array<std::int64_t, 8>;  ///< reduced with MPI_MAX
[[nodiscard]] ScreenVector screen_contribution(const ScreenInput& input) noexcept;

struct ScreenVerdict {
  bool any_failed = false;
  int lowest_failed = -1;       ///< MPI rank of the lowest failed instance (when any_failed)
  bool amiss = false;           ///< a value disagrees or the ranges are not in instance order
  bool all_uniform = true;
};
[[nodiscard]] ScreenVerdict screen_verdict(const ScreenVector& reduced) noexcept;

class JobExchange {
 public:
  JobExchange(MPI_Comm world, int rank, int size, Deadline deadline);
  ~JobExchange();
  JobExchange(const JobExchange&) = delete;
  JobExchange& operator=(const JobExchange&) = delete;

  /// Step 1: the shared-memory split; fills the record's MPI fields.
  void split_hosts(InstanceRecord& mine);
  /// Step 2: the reductions (docs/guide/protocols.md, "init()'s exchange").
  [[nodiscard]] ScreenVerdict screen(const InstanceRecord& mine);
  /// This instance's host placement (after screen()).
  [[nodiscard]] HostPlacement placement() const noexcept { return placement_; }
  /// Step 3, only when some instance failed: every instance throws -- the failed ones their own
  /// error, the others a TopologyError naming the lowest failed instance and its error.
  [[noreturn]] void agree_on_failure(const ScreenVerdict& verdict, std::exception_ptr local_failure,
                                     const std::string& type, const std::string& message);
  /// Step 4, only when needed: every instance's record.
  [[nodiscard]] std::vector<InstanceRecord> gather_records(const InstanceRecord& mine);
  /// On request only (instance_views(), survey_job()): every instance's hostname.
  [[nodiscard]] std::vector<std::string> gather_hostnames(const std::string& mine);
  /// Hands the shared-memory communicator of step 1 over to the caller (the host barrier), who
  /// frees it; MPI_COMM_NULL before step 1.
  [[nodiscard]] MPI_Comm release_shared() noexcept { return std::exchange(shared_, MPI_COMM_NULL); }

 private:
  void wait(std::vector<MPI_Request>& requests, const char* step);

  MPI_Comm world_;
  int rank_;
  int size_;
  Deadline deadline_;
  MPI_Comm shared_ = MPI_COMM_NULL;
  int shm_local_index_ = 0;
  HostPlacement placement_;
};

}  // namespace popdist::detail
