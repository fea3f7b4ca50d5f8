#pragma once
// Runs Catch2's session (what CATCH_CONFIG_MAIN's main does). Catch2 v2 declares Catch::Session
// only beside its implementation, which catch_session.cpp compiles once for every test executable;
// the mains call it through this.

int run_catch_session(int argc, char** argv);
