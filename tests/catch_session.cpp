// Catch2 v2's implementation, compiled once for every test executable (the plain main in
// catch_main.cpp and the MPI tests' own main both run a session through run_catch_session). It is
// the slowest file of the build to compile, and how fast Catch's own internals run does not
// matter, so CMake builds it without optimization or debug information.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "catch_session.hpp"

int run_catch_session(int argc, char** argv) { return Catch::Session().run(argc, argv); }
