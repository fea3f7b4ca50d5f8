// The Catch2 main shared by every test executable but the MPI ones (mpi/mpi_catch_main.cpp);
// Catch's implementation is in catch_session.cpp.
#include "catch_session.hpp"

int main(int argc, char* argv[]) { return run_catch_session(argc, argv); }
