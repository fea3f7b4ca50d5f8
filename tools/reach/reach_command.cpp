#include "reach/reach_command.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <memory>

#include "job/reach_line.hpp"
#include "reach/connect_back.hpp"

namespace popdist::cli {
namespace {

struct ReachOptions {
  std::string address;
  int port = 0;
  int within_ms = 2000;
};

std::string host_name() {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? name : "?";
}

int run_reach(const ReachOptions& options) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(options.within_ms);
  const std::string error = connect_back(options.address, options.port, deadline);
  const std::string where = fmt::format("{}:{}", options.address, options.port);
  if (error.empty()) {
    fmt::print(stderr, "popdist _reach on {}: connected to {}\n", host_name(), where);
    return kReachConnected;
  }
  fmt::print(stderr, "popdist _reach on {}: could not connect to {} within {} ms: {}\n", host_name(), where,
             options.within_ms, error);
  return kReachNoConnection;
}

}  // namespace

std::function<int()> add_reach_command(CLI::App& app) {
  auto* sub = app.add_subcommand(kReachCommand, "Try to connect back to popdist run (its reach probe)");
  sub->group("");  // hidden: only popdist run starts it, on a host whose agents never spoke
  auto options = std::make_shared<ReachOptions>();
  sub->add_option("--address", options->address, "popdist run's channel address")->required();
  sub->add_option("--port", options->port, "its port")->required()->check(CLI::Range(1, 65535));
  sub->add_option("--within", options->within_ms, "milliseconds to try for")->check(CLI::Range(1, 60000));
  return [options] { return run_reach(*options); };
}

}  // namespace popdist::cli
