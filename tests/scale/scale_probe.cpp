// The scale probe (docs/guide/simulation.md): popdist's collective steps next to MPI's own, in one
// job, timed on MPI's clock (MPI_Wtime: simulated time under SimGrid SMPI, real time under
// mpirun) and counted per member by the PMPI layer linked into this program
// (tests/bench/pmpi_counts.cpp). Rank 0 prints one JSON line per step:
//   {"n": N, "step": "...", "skew_s": S, "us": ..., "max_sends": ..., "mean_sends": ...,
//    "max_sent_bytes": ..., "mean_sent_bytes": ..., "max_collectives": ...}
// (point-to-point sends and their bytes; collective calls are counted as calls: what a collective
// sends inside MPI is its algorithm's, O(log N) messages per member for SMPI's defaults)
// "us" is the time from the last member's arrival at the step to the last member's return (an
// arrival is when a member calls it: with --skew S, member r calls each popdist step S x h(r)
// seconds after the common start, h a fixed scramble of r over [0, 1]).
//
// --never-arrives R adds a last step: a timed synchronize over every K-th instance
// (--missing-stride K, default 1: all) that member R (one of them) never calls; every other
// member must get a TimeoutError naming exactly R (exit status 3 otherwise). Before it, a
// registration with the same timeout over that set without its first member other than R (a new
// set, so that registration's handshake runs) that R never calls: the same check.
//
// --late S adds a step (register_late) after execute_on_instances: a registration without a
// timeout over every instance but instance 2 (from 4 instances on), to which instance N-1 comes S
// seconds after the others (--late-count K: the K instances N-1, N-1-D, N-1-2D, ... above 2, for
// --late-stride D; by default the last K, whom one present member tells). Beyond 30 s
// (POPDIST_CENSUS_AFTER) the members still waiting hold a census and tell each missing member
// which of them wait (protocols/registration/census.hpp; it was an all-to-all presence, every waiting
// member telling every other); this step measures it. The time is from the last arrival.
//
// The last step, from 4 instances on: a conflict. Instance N-1 registers {0, N-1} before the set
// of every instance but instance 1, which the others register at once: instance 0 hears of
// {0, N-1} from a member of its own set and tells every member of both sets (Mismatch, the one
// path that sends O(N) messages from one member, design.md §5.6); every member must get a UsageError
// naming both sets (exit status 3 otherwise).
//
// --last STEP ends the probe after the step named STEP (e.g. register_all): at 4,096 simulated
// ranks each step takes minutes of the simulation's real time, and a question about one step
// need not pay for those after it.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "../bench/pmpi_counts.hpp"
#include "popdist/popdist.hpp"

namespace {

using popdist_bench::MpiCounts;

struct Options {
  double skew = 0;          ///< seconds: the spread of arrivals at each popdist step
  int never_arrives = -1;   ///< a member that skips the last timed synchronize
  double timeout = 5.0;     ///< that synchronize's timeout (seconds)
  int missing_stride = 1;   ///< that synchronize is over every missing_stride-th instance
  bool quick = false;       ///< skip the 1% and half registrations (CI)
  double late = 0;          ///< seconds: the delay of the late members of register_late (0: no such step)
  int late_count = 1;       ///< how many members of register_late come late
  int late_stride = 1;      ///< how far apart they are: N-1, N-1-D, N-1-2D, ...
  std::string last;         ///< the step after which the probe stops ("": none)
};

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--skew" && has_value) {
      options.skew = std::atof(argv[++i]);
    } else if (arg == "--never-arrives" && has_value) {
      options.never_arrives = std::atoi(argv[++i]);
    } else if (arg == "--timeout" && has_value) {
      options.timeout = std::atof(argv[++i]);
    } else if (arg == "--missing-stride" && has_value) {
      options.missing_stride = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--late" && has_value) {
      options.late = std::atof(argv[++i]);
    } else if (arg == "--late-count" && has_value) {
      options.late_count = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--late-stride" && has_value) {
      options.late_stride = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--quick") {
      options.quick = true;
    } else if (arg == "--last" && has_value) {
      options.last = argv[++i];
    } else {
      std::fprintf(stderr, "scale_probe: unknown argument '%s'; expected --skew S, --never-arrives R, --timeout S, "
                           "--missing-stride K, --late S, --late-count K, --late-stride D, --quick, --last STEP\n", arg.c_str());
      std::exit(2);
    }
  }
  return options;
}

int g_rank = 0;
int g_size = 1;
Options g_options;
bool g_past_last = false;  ///< the step named by --last has run: the others are skipped

/// A fixed scramble of the rank over [0, 1]: arrivals neither in order nor in reverse.
double spread(int rank, int salt) {
  std::uint64_t x = static_cast<std::uint64_t>(rank) * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(salt);
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 29;
  return static_cast<double>(x % 1000003) / 1000002.0;
}

/// Waits until `at` on MPI's clock (usleep is SMPI's simulated sleep under smpicxx).
double wait_until(double at) {
  const double now = MPI_Wtime();
  if (at > now) usleep(static_cast<useconds_t>((at - now) * 1e6));
  return MPI_Wtime();
}

/// Waits until this member's arrival time at step `salt`.
double arrive(double start, int salt) {
  return g_options.skew > 0 ? wait_until(start + g_options.skew * spread(g_rank, salt)) : MPI_Wtime();
}

/// One step: every member runs `op` (members of a popdist step after their arrival time);
/// rank 0 prints the time after the last arrival and the traffic per member. Only the ranks for
/// which `member` is true count for the times (a subset's step is timed over the subset).
/// `delay`: seconds after the common start at which this member arrives (unskewed steps).
template <class Op>
void step(const char* name, bool skewed, Op&& op, bool member = true, double delay = 0) {
  if (g_past_last) return;  // the same on every rank: no collective is left half-called
  g_past_last = g_options.last == name;
  static int salt = 0;
  ++salt;
  PMPI_Barrier(MPI_COMM_WORLD);
  // Real time: what the simulation itself spends on the step (libstdc++'s clock, which SMPI does
  // not replace by simulated time).
  const auto real_start = std::chrono::steady_clock::now();
  const double start = MPI_Wtime();
  const double arrived = skewed ? arrive(start, salt) : delay > 0 ? wait_until(start + delay) : start;
  const auto before = popdist_bench::mpi_counts();
  op();
  const double done = MPI_Wtime();
  const auto c = popdist_bench::mpi_counts() - before;
  double times[2] = {member ? arrived : 0.0, member ? done : 0.0};
  double latest[2] = {0, 0};
  PMPI_Allreduce(times, latest, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  double mine[3] = {static_cast<double>(c.sends), static_cast<double>(c.sent_bytes),
                    static_cast<double>(c.collectives)};
  double max[3] = {0, 0, 0};
  double sum[3] = {0, 0, 0};
  PMPI_Allreduce(mine, max, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  PMPI_Allreduce(mine, sum, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  const double real_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - real_start).count();
  if (g_rank == 0) {
    std::printf("{\"n\": %d, \"step\": \"%s\", \"skew_s\": %g, \"us\": %.1f, \"max_sends\": %.0f, "
                "\"mean_sends\": %.2f, \"max_sent_bytes\": %.0f, \"mean_sent_bytes\": %.1f, \"max_collectives\": %.0f, \"real_s\": %.2f}\n",
                g_size, name, skewed ? g_options.skew : 0.0, (latest[1] - latest[0]) * 1e6, max[0], sum[0] / g_size,
                max[1], sum[1] / g_size, max[2], real_s);
    std::fflush(stdout);
  }
}

/// The modelled modex's receive buffer, N x 256 bytes on every rank. Under SMPI every simulated
/// rank is in this one process and inside the allgather at once, so that private buffers
/// would hold N^2 x 256 bytes (SMPI's copies of the messages in flight come on top): what made the
/// probe, not popdist, the largest user of memory from thousands of simulated ranks on. SMPI's
/// shared allocation gives every rank the same memory; the network model charges the sizes,
/// never reads the contents.
class ModexBuffer {
 public:
  explicit ModexBuffer(std::size_t bytes) {
#ifdef SMPI_SHARED_MALLOC
    data_ = static_cast<char*>(SMPI_SHARED_MALLOC(bytes));
#else
    own_.resize(bytes);
    data_ = own_.data();
#endif
  }
  ~ModexBuffer() {
#ifdef SMPI_SHARED_MALLOC
    SMPI_SHARED_FREE(data_);
#endif
  }
  ModexBuffer(const ModexBuffer&) = delete;
  ModexBuffer& operator=(const ModexBuffer&) = delete;
  [[nodiscard]] char* data() noexcept { return data_; }

 private:
  std::vector<char> own_;
  char* data_ = nullptr;
};

popdist::InstanceSet every(int stride, int n) {
  popdist::InstanceSet set;
  for (int i = 0; i < n; i += stride) set.insert(i);
  return set;
}

}  // namespace

int main(int argc, char** argv) {
  g_options = parse(argc, argv);
  // SMPI's ranks share one process environment: the identity can only come from MPI itself.
  setenv("POPDIST_LAUNCHER", "mpi", 0);
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  PMPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &g_size);
  const int n = g_size;
  int status = 0;
  try {
    // MPI's own steps first (the baselines), then popdist's.
    step("MPI_Barrier", false, [] { MPI_Barrier(MPI_COMM_WORLD); });
    MPI_Group world_group;
    PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
    step("MPI_Comm_create_group", false, [&] {
      MPI_Comm created = MPI_COMM_NULL;
      MPI_Comm_create_group(MPI_COMM_WORLD, world_group, 7, &created);
      PMPI_Comm_free(&created);
    });
    PMPI_Group_free(&world_group);
    step("MPI_Bcast", false, [] {
      int value = 1;
      MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD);
    });

    // MPI_Init's collective part, which SMPI does not simulate (its MPI_Init sends nothing): what
    // a real MPI_Init exchanges is the modex, every process's endpoint record (a few hundred
    // bytes) to every other, then a barrier; modelled as MPI_Allgather of 256 bytes + MPI_Barrier.
    step("MPI_Init_modex", false, [n] {
      std::vector<char> record(256, 1);
      ModexBuffer records(static_cast<std::size_t>(n) * record.size());
      MPI_Allgather(record.data(), static_cast<int>(record.size()), MPI_BYTE, records.data(),
                    static_cast<int>(record.size()), MPI_BYTE, MPI_COMM_WORLD);
      MPI_Barrier(MPI_COMM_WORLD);
    });
    step("init", g_options.skew > 0, [] { popdist::init(); });
    const bool skewed = g_options.skew > 0;
    step("register_all", skewed, [n] { popdist::register_communicator(every(1, n), "scale/all"); });
    if (!g_options.quick) {
      step("register_half", skewed, [n] {
        if (g_rank % 2 == 0) popdist::register_communicator(every(2, n), "scale/half");
      }, g_rank % 2 == 0);
      const int stride = n >= 100 ? 100 : n;  // a 1% subset (at least one member)
      step("register_1pct", skewed, [n, stride] {
        if (g_rank % stride == 0) popdist::register_communicator(every(stride, n), "scale/1pct");
      }, g_rank % stride == 0);
    }
    step("synchronize", skewed, [] { popdist::synchronize(); });
    step("synchronize_all_set", skewed, [] { popdist::synchronize("scale/all"); });
    // The first timed round over a set looks a little longer for notices of members that gave up
    // on it (timed_barrier.cpp, "the late look"); later rounds do not.
    step("synchronize_timed_first", skewed, [] { popdist::synchronize("scale/all", {}, popdist::Seconds(600.0)); });
    step("synchronize_timed", skewed, [] { popdist::synchronize("scale/all", {}, popdist::Seconds(600.0)); });
    step("execute_on_instances", skewed, [n] {
      popdist::execute_on_instances(every(1, n), [] { return 0; });
    });
    if (g_options.late > 0 && n >= 4) {
      auto all_but_two = every(1, n);  // a set no other step registers
      all_but_two.erase(2);
      // The late members: N-1, N-1-D, ... (--late-count, --late-stride), never instance 2.
      const int from_last = n - 1 - g_rank;
      const bool late = g_rank > 2 && from_last % g_options.late_stride == 0 &&
                        from_last / g_options.late_stride < g_options.late_count;
      step("register_late", false, [&all_but_two] {
        if (g_rank != 2) popdist::register_communicator(all_but_two, "scale/late");
      }, g_rank != 2, late ? g_options.late : 0.0);
    }
    const int stride = g_options.missing_stride;
    if (g_options.never_arrives >= 0 && g_options.never_arrives < n && g_options.never_arrives % stride == 0) {
      const int absent = g_options.never_arrives;
      const auto set = every(stride, n);
      if (stride > 1) {
        step("register_missing_set", false, [&set] {
          if (g_rank % g_options.missing_stride == 0) popdist::register_communicator(set, "scale/missing");
        }, g_rank % stride == 0);
      }
      // The same member never registers a set either: a registration with a timeout over the
      // set without its first other member (a set not registered yet, so that the handshake
      // runs) ends in a TimeoutError naming exactly the absent member, through the roll call.
      auto fresh = set;
      fresh.erase(absent == *set.begin() ? *std::next(set.begin()) : *set.begin());
      if (fresh.size() >= 2) {
        const bool fresh_member = fresh.count(g_rank) != 0 && g_rank != absent;
        step("register_timed_missing", false, [absent, fresh_member, &fresh, &status] {
          if (!fresh_member) return;
          try {
            popdist::register_communicator(fresh, "scale/missing-registration", popdist::Seconds(g_options.timeout));
            std::fprintf(stderr, "scale_probe: instance %d: the registration without instance %d returned\n", g_rank,
                         absent);
            status = 3;
          } catch (const popdist::TimeoutError& error) {
            const std::string text = error.what();
            const std::string named = ": instance " + std::to_string(absent) + " did not register it within";
            if (text.find(named) == std::string::npos) {
              std::fprintf(stderr, "scale_probe: instance %d: the registration's timeout does not name instance %d: "
                                   "%s\n", g_rank, absent, text.c_str());
              status = 3;
            } else if (g_rank == *fresh.begin()) {
              std::printf("{\"n\": %d, \"step\": \"registration_timeout_message\", \"text\": \"...%s\"}\n",
                          g_size, text.substr(text.find(named) + 2).c_str());
            }
          }
        }, fresh_member);
      }
      const char* const id = stride > 1 ? "scale/missing" : "scale/all";
      step("synchronize_timed_missing", false, [absent, id, &status] {
        if (g_rank == absent || g_rank % g_options.missing_stride != 0) return;
        try {
          popdist::synchronize(id, {}, popdist::Seconds(g_options.timeout));
          std::fprintf(stderr, "scale_probe: instance %d: the timed synchronize without instance %d returned\n",
                       g_rank, absent);
          status = 3;
        } catch (const popdist::TimeoutError& error) {
          // Exactly the absent member is named missing (the set's own listing names it too).
          const std::string text = error.what();
          const std::string named = ": instance " + std::to_string(absent) + " did not arrive;";
          if (text.find(named) == std::string::npos) {
            std::fprintf(stderr, "scale_probe: instance %d: the timeout does not name instance %d: %s\n", g_rank,
                         absent, text.c_str());
            status = 3;
          } else if (g_rank == 0) {
            std::printf("{\"n\": %d, \"step\": \"timeout_message\", \"text\": \"...%s\"}\n", g_size,
                        text.substr(text.find(named) + 2).c_str());
          }
        }
      }, g_rank % stride == 0 && g_rank != absent);
    }
    if (n >= 4) {
      auto left = every(1, n);  // a set no other step registers
      left.erase(1);
      const popdist::InstanceSet pair{0, n - 1};
      const bool involved = g_rank != 1;
      step("register_conflict", false, [n, &left, &pair, &status] {
        if (g_rank == 1) return;
        std::string text;
        try {
          if (g_rank == n - 1) popdist::register_communicator(pair, "scale/conflict-pair");
          popdist::register_communicator(left, "scale/conflict");
        } catch (const popdist::UsageError& error) {
          text = error.what();
        }
        const auto both = "{0, " + std::to_string(n - 1) + "}";
        if (text.find("inconsistent registration") == std::string::npos || text.find(both) == std::string::npos) {
          std::fprintf(stderr, "scale_probe: instance %d: the conflict was not an error naming %s: '%s'\n", g_rank,
                       both.c_str(), text.c_str());
          status = 3;
        }
      }, involved);
    }
  } catch (const std::exception& error) {
    std::fprintf(stderr, "scale_probe: instance %d: %s\n", g_rank, error.what());
    status = 1;
  }
  int worst = 0;
  PMPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  popdist::finalize();
  MPI_Finalize();
  return worst;
}
