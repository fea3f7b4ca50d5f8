// The reach probe of a silent host (reach_probe.hpp): which remote shell each backend's launcher
// uses, the probe's command, how its end is read, and real probes run at once under a deadline.
#include <catch2/catch.hpp>

#include "job/reach_line.hpp"
#include "run/supervise/reach_probe.hpp"

using popdist::cli::Backend;
using popdist::cli::ProbeOutcome;
using popdist::cli::remote_shell;
using Words = std::vector<std::string>;
using namespace std::chrono_literals;

TEST_CASE("reach probe: the launcher's own remote shell, from its words, else the environment, else ssh",
          "[supervise][reach]") {
  const auto none = popdist::lookup_in({});
  CHECK(remote_shell(Backend::openmpi, {}, none) == Words{"ssh"});
  CHECK(remote_shell(Backend::hydra, {}, none) == Words{"ssh"});
  CHECK(remote_shell(Backend::openmpi, {"--mca", "pml", "ob1", "--mca", "plm_rsh_agent", "/t/rsh.sh"}, none) ==
        Words{"/t/rsh.sh"});
  CHECK(remote_shell(Backend::openmpi, {"-mca", "orte_rsh_agent", "ssh -x : rsh"}, none) == Words{"ssh", "-x"});
  const auto env = popdist::lookup_in({{"OMPI_MCA_plm_rsh_agent", "oarsh"}, {"HYDRA_LAUNCHER_EXEC", "/h/agent -q"}});
  CHECK(remote_shell(Backend::openmpi, {}, env) == Words{"oarsh"});
  CHECK(remote_shell(Backend::hydra, {}, env) == Words{"/h/agent", "-q"});
  // the words win over the environment; hydra's -bootstrap-exec is the old name
  CHECK(remote_shell(Backend::hydra, {"-launcher", "ssh", "-launcher-exec", "/t/rsh.sh"}, env) == Words{"/t/rsh.sh"});
  CHECK(remote_shell(Backend::hydra, {"-bootstrap-exec", "rsh"}, none) == Words{"rsh"});
  // an Open MPI option is not hydra's, and srun has no remote shell to borrow
  CHECK(remote_shell(Backend::hydra, {"--mca", "plm_rsh_agent", "/t/rsh.sh"}, none) == Words{"ssh"});
  CHECK(remote_shell(Backend::srun, {}, none).empty());
}

TEST_CASE("reach probe: its command behind the remote shell; this machine is never probed", "[supervise][reach]") {
  CHECK(popdist::cli::probe_command({"ssh", "-x"}, "n2", "/opt/bin/popdist", "10.0.0.1", 4711, 2000ms) ==
        Words{"ssh", "-x", "n2", "/opt/bin/popdist", "_reach", "--address", "10.0.0.1", "--port", "4711", "--within",
              "2000"});
  CHECK(popdist::cli::is_this_machine("localhost"));
  CHECK_FALSE(popdist::cli::is_this_machine("no-such-host.invalid"));
}

TEST_CASE("reach probe: its end read as connected, no connection, the shell's failure, or no answer",
          "[supervise][reach]") {
  using popdist::cli::classify_probe;
  CHECK(classify_probe(popdist::cli::kReachConnected, false) == ProbeOutcome::connected);
  CHECK(classify_probe(popdist::cli::kReachNoConnection, false) == ProbeOutcome::no_connection);
  CHECK(classify_probe(255, false) == ProbeOutcome::shell_failed);
  CHECK(classify_probe(127, false) == ProbeOutcome::shell_failed);
  CHECK(classify_probe(0, true) == ProbeOutcome::no_answer);
}

TEST_CASE("reach probe: real probes at once, each with its status and last line, the late one killed",
          "[supervise][reach]") {
  const Words hosts{"a", "b", "c", "d", "e"};
  const std::vector<Words> commands{
      {"sh", "-c", "echo connected >&2; exit 0"},
      {"sh", "-c", "echo 'could not connect: Network is unreachable' >&2; exit 4"},
      {"sh", "-c", "echo 'ssh: Could not resolve hostname c' >&2; echo; exit 255"},
      {"sh", "-c", "echo waiting; exec sleep 30"},
      {"/no/such/remote-shell", "e"},
  };
  const auto results = popdist::cli::run_probes(hosts, commands, std::chrono::steady_clock::now() + 1500ms);
  REQUIRE(results.size() == 5);
  CHECK(results[0].outcome == ProbeOutcome::connected);
  CHECK(results[0].last_line == "connected");
  CHECK(results[1].outcome == ProbeOutcome::no_connection);
  CHECK(results[1].last_line == "could not connect: Network is unreachable");
  CHECK(results[2].outcome == ProbeOutcome::shell_failed);
  CHECK(results[2].status == 255);
  CHECK(results[2].last_line == "ssh: Could not resolve hostname c");
  CHECK(results[3].outcome == ProbeOutcome::no_answer);
  CHECK(results[3].last_line == "waiting");
  CHECK(results[4].outcome == ProbeOutcome::shell_failed);
  CHECK(results[4].status == 127);
  CHECK(results[4].last_line == "popdist run: the reach probe's program could not be started");
  for (std::size_t i = 0; i < hosts.size(); ++i) CHECK(results[i].host == hosts[i]);
}
