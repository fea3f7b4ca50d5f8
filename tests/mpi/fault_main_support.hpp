#pragma once
// For the fault-case programs (own main()s): each rank records what happened, all ranks agree
// on the verdict with one MPI_Allreduce (so a failure on one rank never leaves another
// waiting), rank 0 prints the verdict, and the exit code is 0 only when every rank passed.

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "../step_bounds.hpp"
#include "popdist/popdist.hpp"

namespace popdist_test {

class Verdict {
 public:
  /// Records a check; prints failures at once (with the rank) so they are never lost.
  void check(bool ok, const std::string& what) {
    if (!ok) {
      std::fprintf(stderr, "[rank %d] FAILED: %s\n", rank(), what.c_str());
      passed_ = false;
    }
  }
  /// Every rank: agree, finalize popdist (and MPI when popdist started it), return the exit code.
  int finish(const char* name) {
    int mine = passed_ ? 1 : 0;
    int all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (rank() == 0) std::printf("%s: %s on every rank\n", name, all != 0 ? "passed" : "FAILED (see above)");
    std::fflush(stdout);
    popdist::finalize();
    return all != 0 ? 0 : 1;
  }
  static int rank() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    int rank = 0;
    if (initialized != 0) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
  }

 private:
  bool passed_ = true;
};

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// The fake-host programs' layout argument, instances per host in order ("2,2", "3,1").
inline std::vector<int> instances_per_host(const char* layout) {
  std::vector<int> per_host;
  std::stringstream list(layout);
  for (std::string item; std::getline(list, item, ',');) per_host.push_back(std::stoi(item));
  return per_host;
}

/// The UsageError text of registering `set` (under `id`), or "" when it succeeds.
inline std::string registration_error(const popdist::InstanceSet& set, const std::string& id = "") {
  try {
    popdist::register_communicator(set, id);
  } catch (const popdist::UsageError& error) {
    return error.what();
  }
  return "";
}

}  // namespace popdist_test
