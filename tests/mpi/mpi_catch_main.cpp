// The Catch2 main of the MPI tests (after openPMD's and KaMPIng's): only rank 0 prints, unless
// another rank fails, in which case its captured report is printed with its rank. MPI is
// started by the tests themselves (popdist::init(), which is what they test) and finalized here.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "catch_session.hpp"
#include "popdist/popdist.hpp"

int main(int argc, char** argv) {
  // Which instance are we? detect() reads the launcher's variables, no MPI needed.
  int rank = 0;
  try {
    rank = popdist::instance_index();
  } catch (const std::exception&) {
    rank = 0;
  }
  const bool quiet = rank != 0 && std::getenv("POPDIST_TEST_VERBOSE") == nullptr;
  int saved_stdout = -1;
  std::FILE* captured = nullptr;
  if (quiet) {
    std::fflush(stdout);
    captured = std::tmpfile();
    saved_stdout = dup(STDOUT_FILENO);
    if (captured != nullptr) dup2(fileno(captured), STDOUT_FILENO);
  }
  const int result = run_catch_session(argc, argv);
  if (quiet && captured != nullptr) {
    std::cout.flush();
    std::fflush(stdout);
    dup2(saved_stdout, STDOUT_FILENO);
    if (result != 0) {
      std::rewind(captured);
      std::fprintf(stderr, "---- rank %d failed; its report:\n", rank);
      char buffer[4096];
      std::size_t read = 0;
      while ((read = std::fread(buffer, 1, sizeof buffer, captured)) > 0) std::fwrite(buffer, 1, read, stderr);
    }
    std::fclose(captured);
  }
  popdist::finalize();
  return result;
}
