// The agent's reading of Open MPI's odls_base_signal_direct_children_only (agent/signal_relay.hpp):
// with it, the daemon signals the agent alone and the agent must pass the signal on.
#include <catch2/catch.hpp>

#include "agent/signal_relay.hpp"

using popdist::cli::signals_direct_children_only;

TEST_CASE("Open MPI signals the whole group unless direct_children_only is true", "[agent]") {
  CHECK_FALSE(signals_direct_children_only(std::nullopt));
  for (const char* no : {"0", "false", "no", "off", "", "2"}) CHECK_FALSE(signals_direct_children_only(std::string(no)));
  for (const char* yes : {"1", "true", "TRUE", "Yes", "on"}) CHECK(signals_direct_children_only(std::string(yes)));
}
