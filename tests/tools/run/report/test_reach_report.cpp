// The report on hosts that never spoke, from their reach probes (reach_report.hpp): each host
// that could not reach popdist run named with its reason, the reachable ones on one line, and
// the failure report opening with them as its root cause.
#include <catch2/catch.hpp>

#include "run/report/failure_report.hpp"
#include "run/report/reach_report.hpp"

using Catch::Matchers::Contains;
using popdist::cli::ProbeOutcome;
using popdist::cli::ProbeResult;
using popdist::cli::reach_report;
using popdist::cli::ReachProbing;
using namespace std::chrono_literals;

namespace {
const ReachProbing kProbing{"ssh", "10.0.0.1:4711", 2000ms, 5000ms, 0};
}

TEST_CASE("reach report: each unreached host with its reason", "[report][reach]") {
  const std::vector<ProbeResult> results{
      {"n2", ProbeOutcome::no_connection, 4, "popdist _reach on n2: could not connect: connect: No route to host"},
      {"n3", ProbeOutcome::shell_failed, 255, "ssh: connect to host n3 port 22: Connection refused"},
      {"n4", ProbeOutcome::no_answer, 0, ""},
      {"n5", ProbeOutcome::shell_failed, 127, "sh: 1: /opt/popdist/bin/popdist: not found"},
  };
  const auto text = reach_report(results, kProbing);
  CHECK_THAT(text, Contains("  unreachable host: n2: started by ssh, but could not connect back to popdist run at "
                            "10.0.0.1:4711 within 2.0 s (a firewall, or the wrong interface?") &&
                       Contains("): popdist _reach on n2: could not connect: connect: No route to host\n"));
  CHECK_THAT(text, Contains("  unreachable host: n3: could not be reached by ssh (exit code 255: ssh: connect to host "
                            "n3 port 22: Connection refused)\n"));
  CHECK_THAT(text, Contains("  unreachable host: n4: no answer through ssh within 5.0 s (the host down or not "
                            "answering, or the remote shell waiting for a password)\n"));
  CHECK_THAT(text, Contains("  unreachable host: n5: could not be reached by ssh (exit code 127: sh: 1: "
                            "/opt/popdist/bin/popdist: not found)\n"));
  // in the order probed, no "reachable" line when none was
  CHECK(text.find("n2:") < text.find("n3:"));
  CHECK(text.find("n4:") < text.find("n5:"));
  CHECK(text.find("reachable:") == std::string::npos);
  CHECK(popdist::cli::any_unreached(results));
}

TEST_CASE("reach report: reachable hosts on one line, and the hosts left unprobed", "[report][reach]") {
  ReachProbing probing = kProbing;
  probing.not_probed = 3;
  const std::vector<ProbeResult> results{{"n1", ProbeOutcome::connected, 0, "connected"},
                                         {"n2", ProbeOutcome::connected, 0, "connected"}};
  const auto text = reach_report(results, probing);
  CHECK(text ==
        "  never spoke, but reachable: n1, n2 (started by ssh and connected back to 10.0.0.1:4711: the launcher failed "
        "there for another reason, see its message above)\n"
        "  not probed: 3 more host(s) whose agents never spoke\n");
  CHECK_FALSE(popdist::cli::any_unreached(results));
  CHECK(reach_report({}, kProbing).empty());
  CHECK_FALSE(popdist::cli::any_unreached({}));
}

TEST_CASE("reach report: the silent hosts are those none of whose agents spoke", "[report][reach]") {
  popdist::cli::LaunchPlan plan;
  plan.num_instances = 4;
  plan.hosts = {{"a", std::nullopt, 2}, {"b", std::nullopt, 0}, {"c", std::nullopt, 1}, {"d", std::nullopt, 1}};
  plan.instances = {{0, 0, 0, 0}, {1, 0, 1, 1}, {2, 2, 0, 2}, {3, 3, 0, 3}};
  std::vector<popdist::cli::InstanceRecord> records(4);
  for (int i = 0; i < 4; ++i) records[static_cast<std::size_t>(i)].index = i;
  CHECK(popdist::cli::silent_hosts(plan, records) == std::vector<std::string>{"a", "c", "d"});
  records[1].host = "a.cluster";  // one agent of a spoke (its relay's own name)
  records[3].host = "d";
  CHECK(popdist::cli::silent_hosts(plan, records) == std::vector<std::string>{"c"});
  records[2].host = "c";
  CHECK(popdist::cli::silent_hosts(plan, records).empty());
}

TEST_CASE("the failure report opens with the unreached hosts, as its root cause", "[report][reach]") {
  const auto unreached = reach_report({{"n2", ProbeOutcome::no_connection, 4, "x"}}, kProbing);
  const auto text = popdist::cli::failure_report({}, 0, 0, 1, 213, {}, {}, unreached);
  CHECK(text.rfind("popdist run: the job failed (unreachable host, exit status 213)\n  unreachable host: n2: ", 0) == 0);
  CHECK(text.find("see the launcher's message above") == std::string::npos);
  // reachable hosts only: the launcher's status as it is, and its message is pointed at
  const auto reachable = reach_report({{"n1", ProbeOutcome::connected, 0, ""}}, kProbing);
  CHECK_THAT(popdist::cli::failure_report({}, 0, 0, 1, 213, {}, {}, reachable),
             Contains("the job failed (exit code 213)\n  never spoke, but reachable: n1"));
  // without probes, as before
  CHECK_THAT(popdist::cli::failure_report({}, 0, 0, 1, 213), Contains("see the launcher's message above"));
}

TEST_CASE("after a lost or unreached host, the teardown's SIGTERMs are not a first failure", "[report][reach]") {
  const long long start = 1'000'000'000'000;
  const std::vector<popdist::cli::Failure> terminated{{{1, 143, start + 5'600'000'000, "h1"}, "", "stderr"},
                                                     {{0, 143, start + 5'700'000'000, "h1"}, "", "stderr"}};
  const std::vector<popdist::cli::LostHost> lost{{"h2", {2, 3}, 3500ms}};
  const auto text = popdist::cli::failure_report(terminated, start, 0, 1, 122, lost);
  CHECK_THAT(text, Contains("  lost host: h2 (instances 2, 3; last heard 3.5 s ago)") &&
                       Contains("  stopped by the job's teardown after the host's loss: instance(s) 0, 1\n"));
  CHECK(text.find("first failure") == std::string::npos);
  const auto unreached = reach_report({{"h2", ProbeOutcome::no_connection, 4, "x"}}, kProbing);
  CHECK_THAT(popdist::cli::failure_report(terminated, start, 0, 1, 122, {}, {}, unreached),
             Contains("after the host's loss: instance(s) 0, 1\n"));
  // an instance that failed otherwise is still the first failure, and without a lost host a SIGTERM is too
  auto crashed = terminated;  // as failures_in_order() gives them: the SIGTERM is never first
  crashed[1].end.status = 139;
  std::swap(crashed[0], crashed[1]);
  CHECK_THAT(popdist::cli::failure_report(crashed, start, 0, 1, 122, lost),
             Contains("first failure: instance 0 on h1: SIGSEGV"));
  CHECK_THAT(popdist::cli::failure_report(terminated, start, 0, 1, 143), Contains("first failure: instance 1 on h1"));
}
