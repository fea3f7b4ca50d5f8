// The channel's address (channel_address.hpp) and the bounded lookups under it (name_lookup.hpp),
// with the machine's network injected: lookups that are slow or never answer keep planning within
// its deadline, only the first few distinct names are looked up, and the choice stays right --
// the first host known to be another machine, else this machine's outward address, 127.0.0.1
// only when every host was looked up and is this machine.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "job/launch_plan.hpp"
#include "run/plan/channel_address.hpp"
#include "run/plan/name_lookup.hpp"

using popdist::cli::choose_channel_address;
using popdist::cli::HostSpec;
using popdist::cli::kLookupDeadline;
using popdist::cli::look_up_within;
using popdist::cli::MachineNetwork;
using popdist::cli::NameLookup;
using popdist::cli::plan_launch;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

// The names looked up, and a gate that "hang*" lookups wait at until a test opens it. Never
// destroyed: a lookup left behind by the code under test may still use it at exit.
struct FakeResolver {
  std::mutex mutex;
  std::condition_variable opened;
  bool open = false;
  std::multiset<std::string> asked;
};
FakeResolver& fake() {
  static auto* resolver = new FakeResolver;
  return *resolver;
}

void reset_fake() {
  std::lock_guard lock(fake().mutex);
  fake().open = false;
  fake().asked.clear();
}

void open_gate() {
  {
    std::lock_guard lock(fake().mutex);
    fake().open = true;
  }
  fake().opened.notify_all();
}

// "far<n>": another machine at 10.0.0.<n>; "self*": Debian's 127.0.1.1; "here": this machine's
// own address; "slow-<name>": <name>'s answer after 150 ms; "hang*": waits at the gate, then does
// not resolve; anything else does not resolve (a name only ssh knows).
std::optional<std::string> fake_resolve(const std::string& asked) {
  std::unique_lock lock(fake().mutex);
  fake().asked.insert(asked);
  if (asked.rfind("hang", 0) == 0) {
    fake().opened.wait(lock, [] { return fake().open; });
    return std::nullopt;
  }
  lock.unlock();
  std::string name = asked;
  if (name.rfind("slow-", 0) == 0) std::this_thread::sleep_for(150ms), name = name.substr(5);
  if (name.rfind("far", 0) == 0) return "10.0.0." + name.substr(3);
  if (name.rfind("self", 0) == 0) return "127.0.1.1";
  if (name == "here") return "192.168.1.7";
  return std::nullopt;
}
std::optional<std::string> fake_outward() { return "192.168.1.7"; }
// This machine reaches 10.0.0.x from 10.0.0.100; its own address from itself.
std::optional<std::string> fake_source(const std::string& ipv4) {
  return ipv4 == "192.168.1.7" ? ipv4 : std::string("10.0.0.100");
}

const MachineNetwork network{fake_resolve, fake_outward, nullptr, fake_source};

popdist::cli::LaunchPlan plan_on(const std::vector<std::string>& names) {
  std::vector<HostSpec> hosts;
  for (const auto& name : names) hosts.push_back({name, std::nullopt});
  const int count = static_cast<int>(names.size());
  return plan_launch(count, count, 1, hosts);
}

std::vector<std::string> numbered(const std::string& prefix, int count) {
  std::vector<std::string> names;
  for (int i = 1; i <= count; ++i) names.push_back(prefix + std::to_string(i));
  return names;
}

std::size_t lookups_made() {
  std::lock_guard lock(fake().mutex);
  return fake().asked.size();
}

std::size_t times_asked(const std::string& name) {
  std::lock_guard lock(fake().mutex);
  return fake().asked.count(name);
}

}  // namespace

TEST_CASE("lookups that never answer leave planning at its deadline, with this machine's outward address") {
  reset_fake();
  const auto plan = plan_on(numbered("hang", 4096));
  const auto start = Clock::now();
  const auto chosen = choose_channel_address(plan, network);
  const auto took = Clock::now() - start;
  CHECK(took >= kLookupDeadline - 10ms);
  CHECK(took < kLookupDeadline + 1500ms);
  CHECK(chosen.address == "192.168.1.7");
  CHECK_FALSE(chosen.loopback);
  CHECK_THAT(chosen.decision, Catch::Contains("looked up 8 of 4096 host name(s) at once within 500 ms") &&
                                  Catch::Contains("hang1, hang2, hang3, hang4, hang5, hang6, hang7, hang8 did not "
                                                  "answer within 500 ms"));
  CHECK(lookups_made() == 8);
  open_gate();  // the lookups left behind finish into state nobody reads any more
}

TEST_CASE("slow lookups run at once: six of 150 ms take one wait, not six") {
  reset_fake();
  const auto plan = plan_on({"slow-nowhere1", "slow-self1", "slow-nowhere2", "slow-far9", "slow-far9", "far4",
                             "slow-nowhere3"});
  const auto start = Clock::now();
  const auto chosen = choose_channel_address(plan, network);
  CHECK(Clock::now() - start < kLookupDeadline);
  // In the plan's order: slow-far9 comes before far4, though it answers after it.
  CHECK(chosen.address == "10.0.0.100");
  CHECK_THAT(chosen.decision, Catch::Contains("towards slow-far9, 10.0.0.9") &&
                                  Catch::Contains("looked up 6 of 6 host name(s)") &&
                                  Catch::Contains("slow-self1 127.0.1.1, slow-far9 10.0.0.9, far4 10.0.0.4") &&
                                  Catch::Contains("slow-nowhere1, slow-nowhere2, slow-nowhere3 do not resolve"));
  CHECK(lookups_made() == 6);  // slow-far9 once
}

TEST_CASE("a host that does not answer does not hide the next one, which is another machine") {
  reset_fake();
  const auto chosen = choose_channel_address(plan_on({"hang1", "far7", "far8"}), network);
  CHECK(chosen.address == "10.0.0.100");
  CHECK_THAT(chosen.decision, Catch::Contains("towards far7, 10.0.0.7") &&
                                  Catch::Contains("hang1 did not answer within 500 ms"));
  open_gate();
}

TEST_CASE("only the first eight distinct names are looked up, and those not looked up may be other machines") {
  reset_fake();
  std::vector<std::string> names = numbered("self", 8);
  names.insert(names.begin() + 1, "self1");  // a repeated name counts once
  names.push_back("far9");                   // the ninth distinct host, never looked up
  const auto chosen = choose_channel_address(plan_on(names), network);
  CHECK(lookups_made() == 8);
  CHECK(times_asked("far9") == 0);
  // Every host looked up is this machine, but not every host was: never loopback only.
  CHECK(chosen.address == "192.168.1.7");
  CHECK_FALSE(chosen.loopback);
  CHECK_THAT(chosen.decision, Catch::Contains("looked up 8 of 9 host name(s)"));
}

TEST_CASE("127.0.0.1 when every host was looked up and is this machine") {
  reset_fake();
  auto chosen = choose_channel_address(plan_on({"self1", "here", "self2"}), network);
  CHECK(chosen.address == "127.0.0.1");
  CHECK(chosen.loopback);
  CHECK_THAT(chosen.decision, Catch::StartsWith("the job's channel: every host is this machine"));
  // One that does not resolve may be another machine that only the rsh agent knows.
  chosen = choose_channel_address(plan_on({"self1", "fake-b"}), network);
  CHECK(chosen.address == "192.168.1.7");
  CHECK_THAT(chosen.decision, Catch::Contains("fake-b does not resolve"));
}

TEST_CASE("look_up_within answers in the names' order, and names the ones that did not answer") {
  reset_fake();
  const auto start = Clock::now();
  const auto lookups = look_up_within({"far3", "hang1", "nowhere", "self1"}, fake_resolve, 100ms);
  CHECK(Clock::now() - start < 1100ms);
  REQUIRE(lookups.size() == 4);
  CHECK(lookups[0].outcome == NameLookup::Outcome::kResolved);
  CHECK(lookups[0].address == "10.0.0.3");
  CHECK(lookups[1].outcome == NameLookup::Outcome::kNoAnswer);
  CHECK(lookups[2].outcome == NameLookup::Outcome::kUnresolved);
  CHECK(lookups[3].address == "127.0.1.1");
  CHECK(popdist::cli::describe_lookups(lookups, 100ms) ==
        "far3 10.0.0.3, self1 127.0.1.1; nowhere does not resolve; hang1 did not answer within 100 ms");
  open_gate();
  CHECK(look_up_within({}, fake_resolve, 100ms).empty());
}
