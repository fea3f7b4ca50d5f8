#include "job/local_cores.hpp"

#include <sched.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <utility>

namespace popdist::cli {
namespace {

int read_id(int cpu, const char* file) {
  std::ifstream in("/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/" + file);
  int id = -1;
  in >> id;
  return in ? id : -1;
}

}  // namespace

int local_cores() {
  const int threads = std::max(1U, std::thread::hardware_concurrency());
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (::sched_getaffinity(0, sizeof mask, &mask) != 0) return threads;
  std::set<std::pair<int, int>> cores;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &mask)) continue;
    const int package = read_id(cpu, "physical_package_id");
    const int core = read_id(cpu, "core_id");
    if (package < 0 || core < 0) return threads;
    cores.insert({package, core});
  }
  return cores.empty() ? threads : static_cast<int>(cores.size());
}

}  // namespace popdist::cli
