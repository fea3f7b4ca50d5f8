// hello_popdist: the smallest complete popdist program.
//
//     mpirun -np 4 build/examples/popdist_hello
//
// Each instance starts the backend, says which replicas it drives, meets a subset of the others
// at a barrier, and instance 0 alone runs a piece of work with execute_on_instances. Run it
// without mpirun and it is a job of one instance.
#include <popdist/popdist.hpp>

#include <cstdio>
#include <exception>
#include <optional>
#include <string>

int main() {
  try {
    // Starts MPI (unless someone already did) and checks that every instance sees the same job.
    popdist::init();

    const int me = popdist::instance_index();
    const int instances = popdist::num_instances();
    const int first = popdist::replica_index_offset();
    const int last = first + popdist::num_local_replicas() - 1;
    // One printf per line: under mpirun, lines from different instances must not interleave.
    std::printf("instance %d of %d on host %d: replicas %d-%d of %d, device id %lld\n", me, instances,
                popdist::topology().host_index.value_or(-1), first, last, popdist::num_total_replicas(),
                static_cast<long long>(popdist::device_id(popdist::topology())));
    std::fflush(stdout);

    // A barrier over the first two instances only; the others are not members and return at once.
    popdist::InstanceSet pair{0};
    if (instances > 1) pair.insert(1);
    popdist::synchronize("", pair);
    if (pair.count(me) != 0) {
      std::printf("instance %d passed the barrier of instances {%s}\n", me, instances > 1 ? "0, 1" : "0");
      std::fflush(stdout);
    }

    // Work that only instance 0 does; a collective inside it would be scoped to {0}.
    const std::optional<int> answer = popdist::execute_on_instances({0}, [&] {
      popdist::synchronize();  // over the current scope: just instance 0
      return 6 * 7;
    });
    if (answer) {
      std::printf("instance 0 ran execute_on_instances({0}) -> %d\n", *answer);
      std::fflush(stdout);
    }

    // Everybody, then the summary from instance 0 once all instances got here.
    popdist::synchronize();
    if (me == 0) {
      std::printf("hello_popdist: %d instances, %d replicas, done\n", instances, popdist::num_total_replicas());
      std::fflush(stdout);
    }
    popdist::finalize();
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "hello_popdist: %s\n", error.what());
    // End the whole job: the other instances may be waiting for this one in a collective.
    popdist::abort_job(1);
  }
}
