// The agent's end of the channel (agent/agent_channel.hpp) against a real channel::Server on
// 127.0.0.1, configured as popdist run configures it, through the environment: the instance's
// start, output and end arrive from its host; the secret leaves the environment before the
// program could see it; and an end handed over while popdist run's server is away arrives once
// it is back (the agent elects its host's relay again, which connects again; an end that went
// into the lost relay is sent again through the new one).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include "agent/agent_channel.hpp"
#include <unistd.h>

#include "channel/job_key.hpp"
#include "channel/client.hpp"
#include "channel_support.hpp"

using namespace channel_support;
using popdist::cli::AgentChannel;

namespace {

/// The variables popdist run exports to its agents (run/supervise/job_channel.cpp), for `host`.
/// The environment route: the key itself in POPDIST_CHANNEL_SECRET (job_key.hpp).
void export_channel(const TestServer& test, const std::string& host) {
  ::setenv(kSecretVariable, test.secret.c_str(), 1);
  ::setenv(kNonceVariable, make_job_nonce().c_str(), 1);
  ::setenv(kTagVariable, test.tag.c_str(), 1);
  ::setenv(kAddressVariable, ("127.0.0.1:" + std::to_string(test.server.port())).c_str(), 1);
  ::setenv(kHostVariable, host.c_str(), 1);  // the relay's abstract name is unique to the test
  ::setenv(kBeatVariable, "100", 1);         // a lost link is noticed within a beat
}

template <typename T>
T only(TestServer& test) {
  const auto found = test.collector.of_type<T>();
  REQUIRE(found.size() == 1);
  return std::get<T>(found.at(0).message);
}

}  // namespace

TEST_CASE("the agent's start, output and end reach popdist run's server, and the secret leaves the environment") {
  TestServer test;
  const std::string host = "agent-" + test.tag;
  export_channel(test, host);
  AgentChannel channel(4, "");
  CHECK(std::getenv(kSecretVariable) == nullptr);
  CHECK(std::getenv(kNonceVariable) == nullptr);
  CHECK(std::getenv(kAddressVariable) == nullptr);
  channel.started(4242);
  REQUIRE(test.collector.wait_until([&] { return test.collector.count_locked<Started>() == 1; }));
  channel.wrote();  // connected now (the Started came): the first output is an Activity at once
  REQUIRE(test.collector.wait_until([&] { return test.collector.count_locked<Activity>() == 1; }));
  channel.ended(3, std::chrono::steady_clock::now(), "Traceback (most recent call last):\nValueError: boom\n");
  REQUIRE(test.collector.wait_until([&] { return test.collector.count_locked<Ended>() == 1; }));
  CHECK(test.collector.of_type<Started>().at(0).host == host);
  CHECK(only<Started>(test).instance == 4);
  CHECK(only<Started>(test).pid == 4242);
  CHECK(only<Activity>(test).instance == 4);
  const Ended ended = only<Ended>(test);
  CHECK(ended.instance == 4);
  CHECK(ended.status == 3);
  CHECK(ended.error_text == "Traceback (most recent call last):\nValueError: boom\n");
  CHECK(ended.error_source == ErrorSource::kStderr);
}

TEST_CASE("an end handed over while popdist run's server is away reaches it once it is back on its port") {
  auto away = std::make_unique<TestServer>();
  const std::string secret = away->secret;
  const int port = away->server.port();
  const std::string host = "agent-away-" + away->tag;
  export_channel(*away, host);
  auto channel = std::make_unique<AgentChannel>(2, "");
  channel->started(99);
  REQUIRE(away->collector.wait_until([&] { return away->collector.count_locked<Started>() == 1; }));
  away.reset();  // the agent's relay loses its link, and is elected again while it retries
  std::unique_ptr<TestServer> back;
  std::thread returning([&] {
    std::this_thread::sleep_for(300ms);  // back within the second the end waits to be handed over
    back = std::make_unique<TestServer>(2000ms, 64, secret, port);
  });
  channel->ended(0, std::chrono::steady_clock::now(), "the last words");
  returning.join();
  REQUIRE(back->collector.wait_until([&] { return back->collector.count_locked<Ended>() >= 1; }, 20s));
  std::this_thread::sleep_for(200ms);
  const Ended ended = only<Ended>(*back);  // once, not once per attempt
  CHECK(ended.instance == 2);
  CHECK(ended.status == 0);
  CHECK(ended.error_text == "the last words");
  channel.reset();  // while the server is there: its relay then closes at once
}

TEST_CASE("the key file route: the agent derives the job's key from the user's key file and the job's nonce") {
  char directory[] = "/tmp/popdist-key-test-XXXXXX";
  REQUIRE(::mkdtemp(directory) != nullptr);
  const std::string path = std::string(directory) + "/keys/channel.key";
  const std::string user_key = load_or_make_user_key(path);
  const std::string nonce = make_job_nonce();
  TestServer test(2000ms, 64, derive_job_key(user_key, nonce));
  const std::string host = "agent-file-" + test.tag;
  export_channel(test, host);
  ::unsetenv(kSecretVariable);  // only the nonce, the key's id and the file's path travel
  ::setenv(kNonceVariable, nonce.c_str(), 1);
  ::setenv(kKeyIdVariable, key_id(user_key).c_str(), 1);
  ::setenv(kKeyFileVariable, path.c_str(), 1);
  {
    AgentChannel channel(6, "");
    CHECK(std::getenv(kKeyIdVariable) == nullptr);
    CHECK(std::getenv(kTagVariable) == nullptr);
    channel.started(606);
    REQUIRE(test.collector.wait_until([&] { return test.collector.count_locked<Started>() == 1; }));
    channel.ended(0, std::chrono::steady_clock::now(), "");
    REQUIRE(test.collector.wait_until([&] { return test.collector.count_locked<Ended>() == 1; }));
  }
  CHECK(only<Started>(test).pid == 606);
  CHECK(test.server.stats().refused_hello == 0);
  ::unsetenv(kKeyFileVariable);
  ::unlink(path.c_str());
  ::rmdir((std::string(directory) + "/keys").c_str());
  ::rmdir(directory);
}
