#pragma once
// init()'s exchange with the other instances, one step per method. What a process receives
// does not grow with the number of instances N when the job is sane (DESIGN.md 5, "Scale"):
//
//   split_hosts()  MPI_Comm_split_type(SHARED): which instances share this host;
//   screen()       one MPI_Exscan (replicas and host leaders before me) and one MPI_Allreduce
//                  (MAX over a fixed vector: failure, min/max of the job-wide values, "amiss"),
//                  plus one MPI_Bcast inside the host for its index -- O(log N) messages, a few
//                  dozen bytes, whatever N;
//   agree_on_failure()  only when an instance failed: who failed (4 bytes per instance), and the
//                  lowest failed instance's error text (from that instance only);
//   gather_records()    only when the screen found something amiss or the replicas are not
//                  uniform: one record per instance (64 bytes with today's fields), then the pure job check decides.
//
// Since the instance index equals the MPI rank (checked locally first), the replica ranges tile
// 0..total-1 in instance order exactly when every offset equals the exclusive prefix sum of the
// local replicas and the last range ends at total; a tiling in another order is still valid, and
// the gathered records let the job check accept it. So the screen never passes a job that the
// job check would refuse, and every instance reaches the same verdict from the same reductions.
// Every step is bounded by the deadline (POPDIST_SYNC_TIMEOUT): nonblocking collectives polled
// until it passes.

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
  /// Step 2: the reductions (see the top of this file).
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
