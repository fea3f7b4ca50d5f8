// Multi-host layout after init() (run under the testbed's fake hosts): argv[1] lists the
// instances per host in order, e.g. "2,2" or "3,1". Checks every instance's view: host index,
// local instance index and count, one hostname per host; rank 0 prints the job.

#include "fault_main_support.hpp"

using namespace popdist_test;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <instances per host, e.g. 2,2>\n", argv[0]);
    return 2;
  }
  const auto per_host = instances_per_host(argv[1]);

  popdist::init();
  Verdict verdict;
  const auto& views = popdist::instance_views();
  int instance = 0;
  for (int host = 0; host < static_cast<int>(per_host.size()); ++host) {
    for (int local = 0; local < per_host[static_cast<std::size_t>(host)]; ++local, ++instance) {
      if (instance >= static_cast<int>(views.size())) break;
      const auto& view = views[static_cast<std::size_t>(instance)];
      const auto& t = view.topology;
      if (Verdict::rank() == 0) {
        std::printf("instance %d: hostname %s, host %d, local %d of %d\n", instance, view.hostname.c_str(),
                    t.host_index.value_or(-1), t.local_instance_index, t.num_local_instances);
      }
      const auto where = "instance " + std::to_string(instance);
      verdict.check(t.host_index == host, where + " host index");
      verdict.check(t.local_instance_index == local, where + " local index");
      verdict.check(t.num_local_instances == per_host[static_cast<std::size_t>(host)], where + " local count");
      const auto& leader = views[static_cast<std::size_t>(instance - local)].hostname;
      verdict.check(view.hostname == leader, where + " shares its host's hostname");
      if (host > 0) {
        verdict.check(view.hostname != views[0].hostname, where + " is on another host than instance 0");
      }
    }
  }
  verdict.check(instance == static_cast<int>(views.size()), "the layout covers every instance");
  const auto& mine = popdist::topology();
  verdict.check(mine.provenance.at("host_index") == "mpi", "the host index comes from MPI");
  popdist::synchronize();
  return verdict.finish("multi-host layout");
}
