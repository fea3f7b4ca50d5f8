#include "runtime/job_exchange.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <limits>

#include "mpi/mpi_call.hpp"
#include "popdist/error.hpp"
#include "popdist/timeout_rule.hpp"

namespace popdist::detail {
namespace {

constexpr auto kNone = std::numeric_limits<std::int64_t>::min();

}  // namespace

ScreenVector screen_contribution(const ScreenInput& in) noexcept {
  ScreenVector v{};
  v[0] = in.failed ? 1 : 0;
  v[1] = in.failed ? -static_cast<std::int64_t>(in.rank) : kNone;  // MAX of -rank: the lowest failed rank
  v[2] = in.failed ? kNone : in.total;                               // MAX of total and of -total: max and min
  v[3] = in.failed ? kNone : -in.total;
  v[4] = in.failed ? kNone : in.ipus;
  v[5] = in.failed ? kNone : -in.ipus;
  const bool out_of_order = in.offset != in.replicas_before;
  const bool last_short = in.rank == in.size - 1 && in.replicas_before + in.local != in.total;
  v[6] = !in.failed && (out_of_order || last_short) ? 1 : 0;
  v[7] = !in.failed && !in.uniform ? 1 : 0;
  return v;
}

ScreenVerdict screen_verdict(const ScreenVector& reduced) noexcept {
  ScreenVerdict verdict;
  verdict.any_failed = reduced[0] != 0;
  if (verdict.any_failed) {
    verdict.lowest_failed = static_cast<int>(-reduced[1]);
    return verdict;  // the other values may be kNone: nothing to compare
  }
  verdict.amiss = reduced[6] != 0 || reduced[2] != -reduced[3] || reduced[4] != -reduced[5];
  verdict.all_uniform = reduced[7] == 0;
  return verdict;
}

JobExchange::JobExchange(MPI_Comm world, int rank, int size, Deadline deadline)
    : world_(world), rank_(rank), size_(size), deadline_(deadline) {}

JobExchange::~JobExchange() {
  if (shared_ != MPI_COMM_NULL && mpi_is_usable()) {
    MpiLock lock;
    MPI_Comm_free(&shared_);
  }
}

void JobExchange::wait(std::vector<MPI_Request>& requests, const char* step) {
  if (wait_all(requests, deadline_, step)) return;
  // The collective cannot say who is missing; what it waited for, and for how long, it can.
  throw TimeoutError(fmt::format("init: {} over all {} instances did not complete within {} s (POPDIST_SYNC_TIMEOUT, at least {:g} s in init()): "
                                 "at least one instance did not reach init() (stopped, stuck, or died without the "
                                 "launcher ending the job)",
                                 step, size_, deadline_.seconds(), init_timeout_floor),
                     {});
}

void JobExchange::split_hosts(InstanceRecord& mine) {
  // "Same host" is what MPI's shared-memory split says (design.md §3.2). key = world rank: ranks in
  // `shared_` are ordered by instance index, so its rank 0 is the host's lowest instance.
  MpiLock lock;
  check_mpi(MPI_Comm_split_type(world_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &shared_), "MPI_Comm_split_type");
  int local_size = 1;
  check_mpi(MPI_Comm_rank(shared_, &shm_local_index_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(shared_, &local_size), "MPI_Comm_size");
  MPI_Group shared_group = MPI_GROUP_NULL;
  MPI_Group world_group = MPI_GROUP_NULL;
  const int first = 0;
  int leader = MPI_UNDEFINED;
  int code = MPI_Comm_group(shared_, &shared_group);
  if (code == MPI_SUCCESS) code = MPI_Comm_group(world_, &world_group);
  // The host's lowest world rank, without communicating: a local group translation.
  if (code == MPI_SUCCESS) code = MPI_Group_translate_ranks(shared_group, 1, &first, world_group, &leader);
  if (shared_group != MPI_GROUP_NULL) MPI_Group_free(&shared_group);
  if (world_group != MPI_GROUP_NULL) MPI_Group_free(&world_group);
  check_mpi(code, "MPI_Group_translate_ranks (host layout)");
  mine.mpi_rank = rank_;
  mine.shm_leader = leader;
  mine.shm_local_index = shm_local_index_;
  mine.shm_local_count = local_size;
  placement_.local_instance_index = shm_local_index_;
  placement_.num_local_instances = local_size;
}

ScreenVerdict JobExchange::screen(const InstanceRecord& mine) {
  const bool failed = mine.failed != 0;
  // 1. Replicas and host leaders before me, in instance (== rank) order.
  std::array<std::int64_t, 2> contribution{failed ? 0 : mine.value(field::num_local_replicas), shm_local_index_ == 0 ? 1 : 0};
  std::array<std::int64_t, 2> before{0, 0};
  {
    std::vector<MPI_Request> requests(1, MPI_REQUEST_NULL);
    {
      MpiLock lock;
      check_mpi(MPI_Iexscan(contribution.data(), before.data(), 2, MPI_INT64_T, MPI_SUM, world_, requests.data()),
                "MPI_Iexscan");
    }
    wait(requests, "the exclusive scan of replicas (MPI_Iexscan)");
  }
  if (rank_ == 0) before = {0, 0};  // MPI_Exscan leaves rank 0's result undefined

  // 2. The job-wide verdict, and (inside the host) the host's index: the number of host leaders
  //    before the host's leader.
  ScreenInput input;
  input.failed = failed;
  input.rank = rank_;
  input.size = size_;
  input.replicas_before = before[0];
  input.offset = mine.value(field::replica_index_offset);
  input.local = mine.value(field::num_local_replicas);
  input.total = mine.value(field::num_total_replicas);
  input.ipus = mine.value(field::ipus_per_replica);
  input.uniform = mine.has(InstanceRecord::kUniform);
  const auto mine_reduced = screen_contribution(input);
  ScreenVector reduced{};
  std::int64_t host_index = before[1];
  {
    std::vector<MPI_Request> requests(2, MPI_REQUEST_NULL);
    {
      MpiLock lock;
      check_mpi(MPI_Iallreduce(mine_reduced.data(), reduced.data(), static_cast<int>(reduced.size()), MPI_INT64_T,
                               MPI_MAX, world_, &requests[0]),
                "MPI_Iallreduce");
      check_mpi(MPI_Ibcast(&host_index, 1, MPI_INT64_T, 0, shared_, &requests[1]), "MPI_Ibcast");
    }
    wait(requests, "the job check's reduction (MPI_Iallreduce)");
  }
  placement_.host_index = static_cast<int>(host_index);
  return screen_verdict(reduced);
}

void JobExchange::agree_on_failure(const ScreenVerdict& verdict, std::exception_ptr local_failure,
                                   const std::string& type, const std::string& message) {
  // Who failed (4 bytes per instance, on this path only), and the lowest failed instance's error,
  // from that instance only.
  const int failed_here = local_failure ? 1 : 0;
  std::vector<int> flags(static_cast<std::size_t>(size_));
  std::string text = type + '\n' + message;
  int length = static_cast<int>(text.size());
  {
    std::vector<MPI_Request> requests(2, MPI_REQUEST_NULL);
    {
      MpiLock lock;
      check_mpi(MPI_Iallgather(&failed_here, 1, MPI_INT, flags.data(), 1, MPI_INT, world_, &requests[0]),
                "MPI_Iallgather");
      check_mpi(MPI_Ibcast(&length, 1, MPI_INT, verdict.lowest_failed, world_, &requests[1]), "MPI_Ibcast");
    }
    wait(requests, "the agreement on a failed instance (MPI_Iallgather)");
  }
  text.resize(static_cast<std::size_t>(length));
  {
    std::vector<MPI_Request> requests(1, MPI_REQUEST_NULL);
    {
      MpiLock lock;
      check_mpi(MPI_Ibcast(text.data(), length, MPI_CHAR, verdict.lowest_failed, world_, requests.data()),
                "MPI_Ibcast");
    }
    wait(requests, "the agreement on a failed instance (MPI_Ibcast)");
  }
  if (local_failure) std::rethrow_exception(local_failure);
  std::vector<int> failed;
  for (int rank = 0; rank < size_; ++rank) {
    if (flags[static_cast<std::size_t>(rank)] != 0) failed.push_back(rank);
  }
  const auto split = text.find('\n');
  throw TopologyError(fmt::format("init: instance {} failed ({}: {}){}", verdict.lowest_failed, text.substr(0, split),
                                  split == std::string::npos ? std::string() : text.substr(split + 1),
                                  failed.size() > 1 ? fmt::format("; instances {} failed too", fmt::join(failed, ", "))
                                                    : std::string()));
}

std::vector<InstanceRecord> JobExchange::gather_records(const InstanceRecord& mine) {
  std::vector<InstanceRecord> records(static_cast<std::size_t>(size_));
  std::vector<MPI_Request> requests(1, MPI_REQUEST_NULL);
  {
    MpiLock lock;
    check_mpi(MPI_Iallgather(&mine, sizeof mine, MPI_BYTE, records.data(), sizeof mine, MPI_BYTE, world_,
                             requests.data()),
              "MPI_Iallgather");
  }
  wait(requests, "the gathering of every instance's record (MPI_Iallgather)");
  return records;
}

std::vector<std::string> JobExchange::gather_hostnames(const std::string& mine) {
  const int length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<std::size_t>(size_));
  {
    std::vector<MPI_Request> requests(1, MPI_REQUEST_NULL);
    {
      MpiLock lock;
      check_mpi(MPI_Iallgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, world_, requests.data()),
                "MPI_Iallgather");
    }
    wait(requests, "the gathering of hostnames (MPI_Iallgather)");
  }
  std::vector<int> displacements(static_cast<std::size_t>(size_));
  int total = 0;
  for (int i = 0; i < size_; ++i) {
    displacements[static_cast<std::size_t>(i)] = total;
    total += lengths[static_cast<std::size_t>(i)];
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  {
    std::vector<MPI_Request> requests(1, MPI_REQUEST_NULL);
    {
      MpiLock lock;
      check_mpi(MPI_Iallgatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), displacements.data(),
                                MPI_CHAR, world_, requests.data()),
                "MPI_Iallgatherv");
    }
    wait(requests, "the gathering of hostnames (MPI_Iallgatherv)");
  }
  std::vector<std::string> names;
  for (int i = 0; i < size_; ++i) {
    names.push_back(all.substr(static_cast<std::size_t>(displacements[static_cast<std::size_t>(i)]),
                               static_cast<std::size_t>(lengths[static_cast<std::size_t>(i)])));
  }
  return names;
}

}  // namespace popdist::detail
