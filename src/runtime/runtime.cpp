// The MPI runtime (runtime.hpp): the topology, the PopDist getters, and the runtime's steps of
// init() and finalize() (design.md §4) -- start_runtime(), stop_runtime() -- with the on_exit hook
// they need. The order of those steps, the exit policy and the abort are decided in
// process/lifecycle.cpp, which puts the registry on top.
#include "popdist/runtime.hpp"

#include <mpi.h>
#include <unistd.h>

#include <cxxabi.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>  // on_exit (glibc), std::free
#include <exception>
#include <mutex>
#include <typeinfo>

#include "core/log.hpp"
#include "mpi/deadline.hpp"
#include "mpi/interrupts.hpp"
#include "mpi/mpi_call.hpp"
#include "popdist/arguments.hpp"
#include "popdist/timeout_rule.hpp"
#include "popdist/environment.hpp"
#include "popdist/error.hpp"
#include "popdist/topology_fields.hpp"
#include "runtime/fork_guard.hpp"
#include "runtime/instance_record.hpp"
#include "runtime/job_exchange.hpp"
#include "runtime/launcher_mismatch.hpp"
#include "runtime/runtime_state.hpp"
#include "runtime/watchdog.hpp"

namespace popdist {
namespace detail {

void throw_not_initialized(const char* function) {
  if (in_forked_child()) throw_forked_child(function);
  int finalized = 0;
  MPI_Finalized(&finalized);  // callable at any time, before MPI_Init and after MPI_Finalize
  if (finalized != 0) {
    // "Call init() first" would be bad advice: init() cannot start MPI a second time.
    throw UsageError(fmt::format("{}: MPI has been finalized in this process (popdist.finalize(), C++: "
                                 "popdist::finalize(), or the program that started MPI), and MPI cannot be started "
                                 "twice in a process: popdist's collectives are over for this process",
                                 function));
  }
  throw UsageError(fmt::format("{}: popdist is not initialized: call popdist.init() (C++: popdist::init()) first",
                               function));
}

}  // namespace detail

namespace {

using detail::check_mpi;
using detail::runtime_state;

// Each version is allocated once and never freed (see HotState::topology): other threads may
// still be reading the old one.
void publish_topology(Topology topology) {
  detail::g_hot.topology.store(new Topology(std::move(topology)), std::memory_order_release);
}

std::optional<double> sync_timeout_variable() {
  const auto value = process_environment()("POPDIST_SYNC_TIMEOUT");
  if (!value) return std::nullopt;
  return parsed_timeout_variable(std::string_view(*value));
}

double census_after_variable() {
  const auto value = process_environment()("POPDIST_CENSUS_AFTER");
  if (!value) return detail::kDefaultCensusAfter;
  return parsed_seconds_variable("POPDIST_CENSUS_AFTER", *value);
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

// Why the launcher's identity and MPI's differ: no launcher, another MPI's launcher
// (launcher_mismatch.hpp), or variables left from an enclosing launch.
std::string identity_mismatch_cause(const Topology& topology) {
  if (topology.launcher == Launcher::Singleton) {
    return "no launcher variables were found: start the job with a supported launcher (mpirun, srun, popdist run) "
           "or set POPDIST_LAUNCHER";
  }
  auto hint = detail::launcher_mismatch_hint(detail::mpi_library_version(), process_environment());
  if (!hint.empty()) return hint;
  return "the launcher's variables do not describe this MPI job (stale variables from an enclosing launch?)";
}

// The launcher's identity must be MPI's: the registry names MPI ranks by instance index.
void check_against_mpi(const Topology& topology, int rank, int size) {
  if (topology.num_instances != size || topology.instance_index != rank) {
    const auto launcher = std::string(launcher_name(topology.launcher));
    throw TopologyError(fmt::format(
        "init: the launcher ({}) makes this process instance {} of {} (instance index from {}, count from {}), but MPI "
        "makes it rank {} of {}; {}",
        launcher, topology.instance_index, topology.num_instances, provenance_of(topology, field::instance_index),
        provenance_of(topology, field::num_instances), rank, size, identity_mismatch_cause(topology)));
  }
}

void free_comm(MPI_Comm& comm) noexcept {
  if (comm != MPI_COMM_NULL && detail::mpi_is_usable()) MPI_Comm_free(&comm);
  comm = MPI_COMM_NULL;
}

// The on_exit hook (glibc): the one place that sees the exit status. What happens there is the
// process's exit policy, decided with the rest of its life in process/lifecycle.cpp.
void exit_hook(int status, void* /*unused*/) { detail::exit_with_status(status); }

// Steps 1 and 2 of init(): MPI itself, then popdist's own communicators.
void start_mpi(detail::RuntimeState& state) {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized != 0) {
    throw UsageError("init: MPI has already been finalized in this process, and MPI cannot be initialized twice");
  }
  // MPI_Init_thread and MPI_Comm_dup block until every process joins.
  const detail::Watchdog watchdog(detail::init_timeout(), "every instance to join MPI (MPI_Init_thread, MPI_Comm_dup)");
  int provided = MPI_THREAD_SINGLE;
  if (initialized == 0) {
    // MULTIPLE so that the registry may be used from several threads (design.md §5.5).
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
  state.thread_level = provided;
  detail::set_mpi_calls_serialized(provided < MPI_THREAD_MULTIPLE);
  if (!state.exit_handler_registered) {
    // An exit handler, never a static destructor (their order relative to MPI's own teardown is
    // unspecified), registered when MPI starts (init(), survey_job()). on_exit (glibc) rather
    // than atexit: the exit policy needs the status.
    on_exit(exit_hook, nullptr);
    state.exit_handler_registered = true;
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

// This instance on its own: its topology, POPDIST_SYNC_TIMEOUT, its identity against MPI's. A
// failure is kept, not thrown: the exchange must still run so that nobody is left waiting.
struct LocalOutcome {
  Topology topology;
  detail::InstanceRecord record;
  std::exception_ptr failure;
  std::string type;
  std::string message;
};

LocalOutcome check_locally(detail::RuntimeState& state) {
  LocalOutcome local;
  try {
    local.topology = topology();
    if (local.topology.launcher == Launcher::Mpi) {
      // POPDIST_LAUNCHER=mpi: the identity is MPI's own (world rank and size); the local index,
      // count and host come from the shared-memory split below, as for any launcher without them.
      local.topology = detect(process_environment(), MpiWorld{state.rank, state.size});
    }
    state.default_timeout = sync_timeout_variable();
    state.census_after = census_after_variable();
    check_against_mpi(local.topology, state.rank, state.size);
    local.record = detail::make_record(local.topology);
  } catch (const std::exception& error) {
    local.failure = std::current_exception();
    local.type = demangled_type(error);
    local.message = error.what();
    local.record = detail::make_failed_record();
  }
  return local;
}

// Every instance's view from the gathered records: this instance's own (with its provenance),
// the others rebuilt from their records.
std::vector<InstanceView> views_of(const std::vector<detail::InstanceRecord>& records, const Topology& own, int rank) {
  const auto placements = detail::host_placements(records);
  std::vector<InstanceView> views;
  views.reserve(records.size());
  for (std::size_t i = 0; i < records.size(); ++i) {
    views.push_back({static_cast<int>(i) == rank ? own : detail::topology_of(records[i], placements[i]), std::string()});
  }
  return views;
}

// The exchange of init() and survey_job() alike, up to the verdict: split, screen, and on a
// failure the agreement on it. Returns this instance's topology refined by MPI's placement.
Topology exchange_and_refine(detail::JobExchange& exchange, LocalOutcome& local,
                             detail::ScreenVerdict& verdict, std::vector<std::string>& warnings) {
  {
    // MPI_Comm_split_type blocks, and has no nonblocking form.
    const detail::Watchdog watchdog(detail::init_timeout(), "every instance to reach MPI_Comm_split_type in init()");
    exchange.split_hosts(local.record);
  }
  verdict = exchange.screen(local.record);
  if (verdict.any_failed) exchange.agree_on_failure(verdict, local.failure, local.type, local.message);
  Topology refined = local.topology;
  warnings = detail::apply_placement(refined, detail::said_by_launcher(local.topology), exchange.placement());
  refined.warnings.insert(refined.warnings.end(), warnings.begin(), warnings.end());
  return refined;
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
  auto local = check_locally(state);
  detail::JobExchange exchange(state.world, state.rank, state.size, detail::Deadline::after(detail::init_timeout()));
  detail::ScreenVerdict verdict;
  std::vector<std::string> warnings;
  Topology refined = exchange_and_refine(exchange, local, verdict, warnings);

  state.views.clear();
  state.ranges.clear();
  if (verdict.amiss || !verdict.all_uniform) {
    // Only now does anything grow with the number of instances: a record each, and the one job
    // check decides (the same records everywhere: the same verdict everywhere).
    const auto records = exchange.gather_records(local.record);
    const auto check = check_job(views_of(records, refined, state.rank));
    if (check.has_errors()) throw TopologyError("init: " + check.errors_text());
    for (std::size_t i = 0; i < records.size(); ++i) {
      state.ranges.push_back({static_cast<int>(i), records[i].value(field::replica_index_offset),
                              records[i].value(field::num_local_replicas)});
    }
  }
  for (const auto& warning : warnings) detail::logger().warn("{}", warning);
  publish_topology(refined);
  // The host placement, for the layers above (the registry's host barrier).
  state.host = exchange.release_shared();
  detail::set_log_identity(state.rank, state.size, host_name());
}

}  // namespace

namespace detail {

// The bound of init()'s own steps (timeout_rule.hpp: POPDIST_SYNC_TIMEOUT, at least
// init_timeout_floor). Read before check_locally() parses the variable (a bad value is reported
// there, after MPI is up, on every instance alike).
std::optional<double> init_timeout() {
  try {
    return init_timeout_of(sync_timeout_variable());
  } catch (const Error&) {
    return std::nullopt;
  }
}

void start_runtime(RuntimeState& state) {
  try {
    initialize(state);
  } catch (...) {
    release_runtime_after_failure(state, std::current_exception());
    throw;
  }
}

// init() failed: leave nothing half-made; MPI stays initialized (finalize() or exit ends it if
// we own it) unless an exchange timed out inside it.
void release_runtime_after_failure(RuntimeState& state, const std::exception_ptr& failure) noexcept {
  try {
    std::rethrow_exception(failure);
  } catch (const TimeoutError&) {
    state.mpi_wedged = true;  // collectives still outstanding on world: do not touch it again
    return;
  } catch (...) {
  }
  if (wait_was_interrupted()) {
    state.mpi_wedged = true;  // Ctrl-C left an exchange's collectives outstanding, as a timeout does
    return;
  }
  free_comm(state.host);
  free_comm(state.control);
  free_comm(state.world);
}

// Meets the other instances in MPI_Barrier, then finalizes. MPI_Finalize waits for every
// instance anyway (Open MPI: a PMIx fence), but an instance that aborts while another waits in
// that fence can leave Open MPI 4.1's mpirun hung or crashed in its PMIx teardown (3 of 8 runs
// of a bare MPI program here; ompi#6222, ompi#13650); one waiting in MPI_Barrier is simply
// killed (0 of 28). So the wait moves from the fence to a barrier; it costs one barrier at exit.
namespace {
void finalize_mpi() {
  check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
  check_mpi(MPI_Finalize(), "MPI_Finalize");
}
}  // namespace

void stop_runtime(RuntimeState& state) {
  if (state.mpi_wedged) {
    // A timed-out exchange left collectives outstanding: freeing or finalizing could block
    // forever. The launcher ends the job when this process exits.
    state.owns_mpi = false;
    return;
  }
  // Every step checks MPI_Finalized first: a host program may have finalized MPI already, and
  // then there is nothing left to free.
  free_comm(state.control);
  free_comm(state.host);
  free_comm(state.world);
  if (state.owns_mpi) {
    state.owns_mpi = false;
    if (mpi_is_usable()) finalize_mpi();
  }
}

}  // namespace detail

const Topology& topology() {
  auto& published = detail::g_hot.topology;
  if (const auto* current = published.load(std::memory_order_acquire)) return *current;
  std::lock_guard<std::mutex> guard(runtime_state().topology_mutex);
  if (const auto* current = published.load(std::memory_order_acquire)) return *current;
  // detect() throws EnvironmentError for a bad environment; the next call tries again.
  publish_topology(detect(process_environment()));
  return *published.load(std::memory_order_acquire);
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

namespace {

// Every instance's view with hostnames over `state.world`: collective, on request only.
std::vector<InstanceView> gather_views(detail::RuntimeState& state, detail::JobExchange& exchange,
                                       const detail::InstanceRecord& mine, const Topology& own) {
  auto views = views_of(exchange.gather_records(mine), own, state.rank);
  const auto names = exchange.gather_hostnames(host_name());
  for (std::size_t i = 0; i < views.size(); ++i) views[i].hostname = names[i];
  return views;
}

}  // namespace

const std::vector<InstanceView>& instance_views() {
  detail::require_initialized("instance_views");
  auto& state = runtime_state();
  std::lock_guard<std::mutex> guard(state.lifecycle_mutex);
  if (state.views.empty()) {
    const auto& own = topology();
    auto local = LocalOutcome{own, detail::make_record(own), nullptr, {}, {}};
    detail::JobExchange exchange(state.world, state.rank, state.size, detail::Deadline::after(state.default_timeout));
    exchange.split_hosts(local.record);
    state.views = gather_views(state, exchange, local.record, own);
  }
  return state.views;
}

JobSurvey survey_job() {
  auto& state = runtime_state();
  std::lock_guard<std::mutex> guard(state.lifecycle_mutex);
  const bool was_initialized = detail::g_hot.initialized.load(std::memory_order_acquire);
  if (!was_initialized) {
    try {
      (void)topology();  // before MPI_Init, as in init()
    } catch (const Error&) {
    }
    if (state.world == MPI_COMM_NULL) start_mpi(state);
  }
  // popdist's own communicators exist only for the survey when popdist is not initialized.
  struct Release {
    detail::RuntimeState& state;
    bool release;
    ~Release() {
      if (release && !state.mpi_wedged) {
        free_comm(state.control);
        free_comm(state.world);
      }
    }
  } release{state, !was_initialized};
  auto local = check_locally(state);
  detail::JobExchange exchange(state.world, state.rank, state.size, detail::Deadline::after(detail::init_timeout()));
  detail::ScreenVerdict verdict;
  std::vector<std::string> warnings;
  JobSurvey survey;
  try {
    const Topology refined = was_initialized ? topology() : exchange_and_refine(exchange, local, verdict, warnings);
    if (was_initialized) exchange.split_hosts(local.record);
    survey.views = gather_views(state, exchange, local.record, refined);
  } catch (const TimeoutError&) {
    state.mpi_wedged = true;
    throw;
  }
  survey.check = check_job(survey.views);
  return survey;
}

std::vector<ReplicaRange> replica_ranges() {
  const auto& state = runtime_state();
  // init() gathered them when the replicas are not uniform; otherwise they are derived below.
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
