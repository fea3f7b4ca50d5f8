// The process-wide context (runtime.hpp): the topology, the PopDist getters, and the MPI
// lifecycle -- init(), finalize(), abort_job() (DESIGN.md 4).
#include "popdist/runtime.hpp"

#include <mpi.h>
#include <unistd.h>

#include <cxxabi.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <atomic>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <typeinfo>

#include "core/log.hpp"
#include "popdist/environment.hpp"
#include "popdist/error.hpp"
#include "runtime/instance_record.hpp"
#include "runtime/instance_sets.hpp"
#include "runtime/mpi_call.hpp"
#include "runtime/registry_state.hpp"
#include "runtime/runtime_state.hpp"

namespace popdist {
namespace detail {

RuntimeState& runtime_state() {
  // Never destroyed: MPI must not be touched from a static destructor.
  static auto* const the_state = new RuntimeState();
  return *the_state;
}

void throw_not_initialized(const char* function) {
  throw UsageError(fmt::format("{}: popdist is not initialized: call popdist.init() (C++: popdist::init()) first",
                               function));
}

}  // namespace detail

namespace {

using detail::check_mpi;
using detail::runtime_state;

// The current topology. Each version is allocated once and never freed, so a reference handed
// out by topology() stays valid when init() publishes the refined version (other threads may
// still be reading the old one).
std::atomic<const Topology*> g_topology{nullptr};
std::mutex g_topology_mutex;

void publish_topology(Topology topology) {
  g_topology.store(new Topology(std::move(topology)), std::memory_order_release);
}

std::string demangled_type(const std::exception& error) {
  int status = 0;
  char* readable = abi::__cxa_demangle(typeid(error).name(), nullptr, nullptr, &status);
  std::string name = status == 0 && readable != nullptr ? readable : typeid(error).name();
  std::free(readable);
  return name;
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown-host";
  return name;
}

std::string provenance_of(const Topology& topology, const char* field) {
  const auto found = topology.provenance.find(field);
  return found == topology.provenance.end() ? std::string("unknown") : found->second;
}

// The launcher's identity must be MPI's: the registry names MPI ranks by instance index.
void check_against_mpi(const Topology& topology, int rank, int size) {
  if (topology.num_instances != size || topology.instance_index != rank) {
    const auto launcher = std::string(launcher_name(topology.launcher));
    throw TopologyError(fmt::format(
        "init: the launcher ({}) makes this process instance {} of {} (instance index from {}, count from {}), but MPI "
        "makes it rank {} of {}; {}",
        launcher, topology.instance_index, topology.num_instances, provenance_of(topology, "instance_index"),
        provenance_of(topology, "num_instances"), rank, size,
        topology.launcher == Launcher::Singleton
            ? "no launcher variables were found: start the job with a supported launcher (mpirun, srun, popdist run) "
              "or set POPDIST_LAUNCHER"
            : "the launcher's variables do not describe this MPI job (stale variables from an enclosing launch?)"));
  }
}

void free_comm(MPI_Comm& comm) noexcept {
  if (comm != MPI_COMM_NULL && detail::mpi_is_usable()) MPI_Comm_free(&comm);
  comm = MPI_COMM_NULL;
}

void finalize_at_exit() {
  try {
    finalize();
  } catch (...) {
    // Nothing sensible is left to do at exit; never terminate() from an atexit handler.
  }
}

// Steps 1 and 2 of init(): MPI itself, then popdist's own communicators.
void start_mpi(detail::RuntimeState& state) {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized != 0) {
    throw UsageError("init: MPI has already been finalized in this process, and MPI cannot be initialized twice");
  }
  int provided = MPI_THREAD_SINGLE;
  if (initialized == 0) {
    // MULTIPLE so that the registry may be used from several threads (DESIGN.md 5).
    check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
    state.owns_mpi = true;
  } else {
    // mpi4py or the host program initialized MPI: use it as it is, and never finalize it.
    check_mpi(MPI_Query_thread(&provided), "MPI_Query_thread");
  }
  if (provided < MPI_THREAD_MULTIPLE) {
    detail::logger().warn("MPI provides thread level {} (MPI_THREAD_MULTIPLE is {}): popdist serializes its MPI calls; "
                          "blocking collectives from several threads at once can deadlock, and your own MPI calls from "
                          "other threads must not overlap popdist's",
                          provided, MPI_THREAD_MULTIPLE);
  }
  detail::set_mpi_calls_serialized(provided < MPI_THREAD_MULTIPLE);
  if (!state.atexit_registered) {
    // Finalize at exit from an atexit handler, never from a static destructor (the order of
    // those relative to MPI's own teardown is unspecified).
    std::atexit(finalize_at_exit);
    state.atexit_registered = true;
  }

  detail::MpiLock lock;
  check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &state.world), "MPI_Comm_dup");
  // Errors on popdist's communicators come back as codes (turned into MpiError); the host
  // program's communicators keep their own error handlers.
  check_mpi(MPI_Comm_set_errhandler(state.world, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check_mpi(MPI_Comm_dup(state.world, &state.control), "MPI_Comm_dup");
  check_mpi(MPI_Comm_set_errhandler(state.control, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check_mpi(MPI_Comm_rank(state.world, &state.rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(state.world, &state.size), "MPI_Comm_size");
  void* tag_ub = nullptr;
  int found = 0;
  check_mpi(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &found), "MPI_Comm_get_attr");
  state.tag_ub = found != 0 ? *static_cast<int*>(tag_ub) : 32767;
}

// "Same host" is what MPI's shared-memory split says (DESIGN.md 3.2): fills the record's
// shm fields. Collective over the world: every instance calls it, even one that failed.
void learn_host(detail::RuntimeState& state, detail::InstanceRecord& record) {
  detail::MpiLock lock;
  MPI_Comm shared = MPI_COMM_NULL;
  // key = world rank: ranks in `shared` are ordered by instance index.
  check_mpi(MPI_Comm_split_type(state.world, MPI_COMM_TYPE_SHARED, state.rank, MPI_INFO_NULL, &shared),
            "MPI_Comm_split_type");
  int local_rank = 0;
  int local_size = 1;
  MPI_Group shared_group = MPI_GROUP_NULL;
  MPI_Group world_group = MPI_GROUP_NULL;
  const int first = 0;
  int leader = MPI_UNDEFINED;
  int code = MPI_Comm_rank(shared, &local_rank);
  if (code == MPI_SUCCESS) code = MPI_Comm_size(shared, &local_size);
  if (code == MPI_SUCCESS) code = MPI_Comm_group(shared, &shared_group);
  if (code == MPI_SUCCESS) code = MPI_Comm_group(state.world, &world_group);
  // The host's lowest world rank, without communicating: a local group translation.
  if (code == MPI_SUCCESS) code = MPI_Group_translate_ranks(shared_group, 1, &first, world_group, &leader);
  if (shared_group != MPI_GROUP_NULL) MPI_Group_free(&shared_group);
  if (world_group != MPI_GROUP_NULL) MPI_Group_free(&world_group);
  MPI_Comm_free(&shared);
  check_mpi(code, "MPI_Comm_split_type (host layout)");
  record.mpi_rank = state.rank;
  record.shm_leader = leader;
  record.shm_local_index = local_rank;
  record.shm_local_count = local_size;
  detail::copy_text(record.hostname, sizeof record.hostname, host_name());
}

// Every failure is agreed on: an instance that failed locally rethrows its own error, the
// others name the lowest failed instance and its error.
[[noreturn]] void throw_agreed_failure(const std::vector<detail::InstanceRecord>& records,
                                       const std::vector<int>& failed, std::exception_ptr local_failure) {
  if (local_failure) std::rethrow_exception(local_failure);
  const auto& first = records[static_cast<std::size_t>(failed.front())];
  throw TopologyError(fmt::format("init: instance {} failed ({}: {}){}", failed.front(), first.error_type, first.error,
                                  failed.size() > 1 ? fmt::format("; instances {} failed too", fmt::join(failed, ", "))
                                                    : std::string()));
}

void initialize(detail::RuntimeState& state) {
  // Detect before MPI_Init: a singleton MPI_Init adds PMIX_RANK & co. to the environment, which
  // is not how the process was launched. A bad environment is reported below, after the
  // collective steps, so that no other instance is left waiting.
  try {
    (void)topology();
  } catch (const Error&) {
  }
  start_mpi(state);

  // Local checks. A failure here must not leave the others waiting in the allgather: it is
  // recorded and gathered like everything else, and every instance throws.
  detail::InstanceRecord record;
  std::exception_ptr local_failure;
  Topology local;
  try {
    local = topology();
    state.default_timeout = detail::parse_sync_timeout(process_environment()("POPDIST_SYNC_TIMEOUT"));
    check_against_mpi(local, state.rank, state.size);
    record = detail::make_record(local);
  } catch (const std::exception& error) {
    local_failure = std::current_exception();
    record = detail::make_failed_record(demangled_type(error), error.what());
  }
  learn_host(state, record);

  std::vector<detail::InstanceRecord> records(static_cast<std::size_t>(state.size));
  {
    detail::MpiLock lock;
    check_mpi(MPI_Allgather(&record, sizeof record, MPI_BYTE, records.data(), sizeof record, MPI_BYTE, state.world),
              "MPI_Allgather");
  }
  if (const auto failed = detail::failed_ranks(records); !failed.empty()) {
    throw_agreed_failure(records, failed, local_failure);
  }
  const auto placements = detail::host_placements(records);
  Topology refined = local;
  auto warnings = detail::apply_placement(refined, detail::said_by_launcher(local),
                                          placements[static_cast<std::size_t>(state.rank)]);
  refined.warnings.insert(refined.warnings.end(), warnings.begin(), warnings.end());
  // The views are kept even when the checks below fail, so that `popdist topology --all` can
  // still show every instance's view and point at the values that disagree.
  state.views.clear();
  state.ranges.clear();
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto& other = records[i];
    auto view = static_cast<int>(i) == state.rank ? refined : detail::topology_of(other, placements[i]);
    state.views.push_back({std::move(view), std::string(other.hostname)});
    state.ranges.push_back({static_cast<int>(i), other.replica_index_offset, other.num_local_replicas});
  }
  try {
    detail::check_records(records);  // the same data everywhere: the same verdict everywhere
  } catch (...) {
    state.ranges.clear();  // not a valid job: replica_ranges() must not hand them out
    throw;
  }
  for (const auto& warning : warnings) detail::logger().warn("{}", warning);
  publish_topology(refined);
  detail::registry().reset(state.world, state.size, state.rank, state.tag_ub);
  detail::set_log_identity(state.rank, state.size, host_name());
}

}  // namespace

const Topology& topology() {
  if (const auto* current = g_topology.load(std::memory_order_acquire)) return *current;
  std::lock_guard<std::mutex> guard(g_topology_mutex);
  if (const auto* current = g_topology.load(std::memory_order_acquire)) return *current;
  // detect() throws EnvironmentError for a bad environment; the next call tries again.
  publish_topology(detect(process_environment()));
  return *g_topology.load(std::memory_order_acquire);
}

int instance_index() { return topology().instance_index; }
int num_instances() { return topology().num_instances; }
int local_instance_index() { return topology().local_instance_index; }
int num_local_replicas() { return topology().num_local_replicas; }
int num_total_replicas() { return topology().num_total_replicas; }
int replica_index_offset() { return topology().replica_index_offset; }
int ipus_per_replica() { return topology().ipus_per_replica; }
bool is_uniform_replicas_per_instance() { return topology().uniform_replicas_per_instance; }
bool is_popdist_env_set() { return topology().popdist_env_set; }

void init() {
  auto& state = runtime_state();
  std::lock_guard<std::mutex> guard(state.lifecycle_mutex);
  if (detail::g_hot.initialized.load(std::memory_order_acquire)) return;
  try {
    initialize(state);
  } catch (...) {
    // Leave nothing half-made; MPI stays initialized (finalize() or exit ends it if we own it).
    free_comm(state.control);
    free_comm(state.world);
    throw;
  }
  detail::g_hot.root.store(&detail::registry().root(), std::memory_order_relaxed);
  detail::g_hot.has_default_timeout.store(state.default_timeout.has_value(), std::memory_order_relaxed);
  detail::g_hot.initialized.store(true, std::memory_order_release);
}

bool is_initialized() noexcept { return detail::g_hot.initialized.load(std::memory_order_acquire); }

void finalize() {
  auto& state = runtime_state();
  std::lock_guard<std::mutex> guard(state.lifecycle_mutex);
  // Deterministic order: subset communicators (set order), then popdist's control and world
  // duplicates, then MPI itself -- and MPI only if popdist started it (mpi4py or the host
  // program finalize their own). Every step checks MPI_Finalized first: a host program may have
  // finalized MPI already, and then there is nothing left to free.
  if (detail::g_hot.initialized.exchange(false, std::memory_order_acq_rel)) {
    detail::g_hot.root.store(nullptr, std::memory_order_relaxed);
    detail::registry().release_all();
  }
  free_comm(state.control);
  free_comm(state.world);
  if (state.owns_mpi) {
    state.owns_mpi = false;
    if (detail::mpi_is_usable()) check_mpi(MPI_Finalize(), "MPI_Finalize");
  }
}

void abort_job(int exit_code) noexcept {
  if (detail::mpi_is_usable()) MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);
}

const std::vector<InstanceView>& instance_views() {
  const auto& state = runtime_state();
  if (state.views.empty()) detail::throw_not_initialized("instance_views");
  return state.views;
}

std::vector<ReplicaRange> replica_ranges() {
  const auto& state = runtime_state();
  if (!state.ranges.empty()) return state.ranges;
  const auto& own = topology();
  if (!own.uniform_replicas_per_instance) {
    throw UsageError("replica_ranges: the replicas per instance are not uniform, so the other instances' ranges are "
                     "unknown until popdist.init() (C++: popdist::init()) gathers them");
  }
  std::vector<ReplicaRange> ranges;
  for (int i = 0; i < own.num_instances; ++i) {
    ranges.push_back({i, i * own.num_local_replicas, own.num_local_replicas});
  }
  return ranges;
}

}  // namespace popdist
