// The port popdist run offers as MASTER_PORT (listen_port.hpp): read the kernel's ephemeral range,
// then pick a free port outside it. Which ports are free is injected.
#include <catch2/catch.hpp>

#include <set>

#include "run/plan/listen_port.hpp"

using popdist::cli::kLowestOfferedPort;
using popdist::cli::parse_port_range;
using popdist::cli::pick_listen_port;
using popdist::cli::PortRange;

namespace {
bool every_port_free(int) { return true; }
}  // namespace

TEST_CASE("the ephemeral range reads as the kernel writes it") {
  const auto range = parse_port_range("32768\t60999\n");
  REQUIRE(range);
  CHECK(range->first == 32768);
  CHECK(range->last == 60999);
  CHECK(parse_port_range(" 1024 65535")->last == 65535);
  for (const char* bad : {"", "32768", "32768 x", "60999 32768", "0 100", "1 65536", "1 2 3", "-1 5"}) {
    INFO(bad);
    CHECK_FALSE(parse_port_range(bad));
  }
}

TEST_CASE("a picked port is never in the ephemeral range nor below the lowest offered port") {
  const PortRange ephemeral{32768, 60999};
  for (unsigned start : {0u, 1u, 22767u, 22768u, 99999u}) {
    const auto port = pick_listen_port(ephemeral, start, every_port_free, 1);
    REQUIRE(port);
    CHECK(*port >= kLowestOfferedPort);
    CHECK(*port <= 65535);
    CHECK((*port < ephemeral.first || *port > ephemeral.last));
  }
  CHECK(pick_listen_port(ephemeral, 0, every_port_free, 1) == kLowestOfferedPort);
  CHECK(pick_listen_port(ephemeral, 32768 - kLowestOfferedPort, every_port_free, 1) == 61000);  // first above
  CHECK(pick_listen_port(ephemeral, 32768 - kLowestOfferedPort + 4535, every_port_free, 1) == 65535);
  CHECK(pick_listen_port(ephemeral, 32768 - kLowestOfferedPort + 4536, every_port_free, 1) == kLowestOfferedPort);
}

TEST_CASE("taken ports are skipped, every offered port is reachable, and attempts are bounded") {
  const PortRange ephemeral{20000, 65000};
  std::set<int> tried;
  const auto taken_until_last = [&](int port) {
    tried.insert(port);
    return port == 65535;
  };
  CHECK(pick_listen_port(ephemeral, 0, taken_until_last, 100000) == 65535);
  CHECK(tried.size() == (20000 - kLowestOfferedPort) + (65535 - 65000));  // each offered port once
  CHECK(*tried.begin() == kLowestOfferedPort);
  CHECK_FALSE(pick_listen_port(ephemeral, 0, [](int) { return false; }, 50));
  int calls = 0;
  CHECK_FALSE(pick_listen_port(ephemeral, 0, [&](int) {
    ++calls;
    return false;
  }, 50));
  CHECK(calls == 50);
}

TEST_CASE("no port is offered when the ephemeral range covers every port above the lowest") {
  CHECK_FALSE(pick_listen_port(PortRange{1024, 65535}, 7, every_port_free, 100));
  CHECK(pick_listen_port(PortRange{1024, 65534}, 7, every_port_free, 100) == 65535);
}
