// Fault case: one instance (the last) reaches init() long after POPDIST_SYNC_TIMEOUT (run with
// POPDIST_SYNC_TIMEOUT=1, which init() raises to its floor of 5 s). The others block inside MPI itself (MPI_Init_thread or the
// communicator duplication, which wait for every process), where popdist cannot throw: the
// watchdog must end them with a message saying what they waited for, instead of a silent hang.
// The test passes on that message and on the job ending well within the late instance's 20 s
// delay (ctest's TIMEOUT).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "popdist/popdist.hpp"

int main() {
  // The launcher's variables, read before MPI (this is what a task that hangs before init() is).
  const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
  const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
  if (rank != nullptr && size != nullptr && std::stoi(rank) == std::stoi(size) - 1) {
    std::this_thread::sleep_for(std::chrono::seconds(20));
  }
  popdist::init();
  std::printf("init() returned after the late instance came\n");
  popdist::finalize();
  return 0;
}
