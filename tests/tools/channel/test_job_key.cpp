// How the job's key reaches the agents (tools/channel/job_key.hpp): the user's key file, made on
// first use (0600 in a 0700 directory) and refused when others may read it; the job's key derived
// from it and the public nonce; the agent's side, by either route, with every refusal naming the
// variable or file and what to do.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <map>

#include "channel/job_key.hpp"

using namespace popdist::cli::channel;

namespace {

struct TempHome {
  TempHome() {
    char name[] = "/tmp/popdist-job-key-XXXXXX";
    REQUIRE(::mkdtemp(name) != nullptr);
    path = name;
  }
  ~TempHome() {
    for (const char* file : {"/.popdist/channel.key", "/other.key"}) ::unlink((path + file).c_str());
    ::rmdir((path + "/.popdist").c_str());
    ::rmdir(path.c_str());
  }
  std::string path;
};

EnvironmentLookup lookup_in(std::map<std::string, std::string> variables) {
  return [variables](const char* name) -> std::optional<std::string> {
    const auto found = variables.find(name);
    return found == variables.end() ? std::nullopt : std::optional<std::string>(found->second);
  };
}

mode_t mode_of(const std::string& path) {
  struct stat status {};
  REQUIRE(::stat(path.c_str(), &status) == 0);
  return status.st_mode & 0777;
}

}  // namespace

TEST_CASE("job key: the user's key file is made on first use, 0600 in a 0700 directory, and kept") {
  TempHome home;
  const std::string path = key_file_path(lookup_in({{"HOME", home.path}}));
  CHECK(path == home.path + "/.popdist/channel.key");
  const std::string key = load_or_make_user_key(path);
  CHECK(key.size() == 32);
  CHECK(mode_of(path) == 0600);
  CHECK(mode_of(home.path + "/.popdist") == 0700);
  CHECK(load_or_make_user_key(path) == key);
  CHECK(read_user_key(path) == key);
  CHECK(key_file_path(lookup_in({{"HOME", home.path}, {kKeyFileVariable, "/elsewhere/k"}})) == "/elsewhere/k");
}

TEST_CASE("job key: a key file others may read, or that holds no key, is refused and named") {
  TempHome home;
  const std::string path = home.path + "/other.key";
  CHECK_THROWS_WITH(read_user_key(path), Catch::StartsWith("the channel's key file " + path + " cannot be read: "));
  std::ofstream(path) << std::string(64, 'a') << "\n";
  ::chmod(path.c_str(), 0644);
  CHECK_THROWS_WITH(read_user_key(path), "the channel's key file " + path + " is open to other users (mode 0644): "
                                         "chmod 600 it, or remove it and let popdist run make another");
  ::chmod(path.c_str(), 0600);
  CHECK(read_user_key(path) == std::string(32, '\xaa'));
  std::ofstream(path) << "not a key\n";
  CHECK_THROWS_WITH(read_user_key(path), Catch::EndsWith("does not hold a key: expected 64 hex digits and a newline "
                                                         "(its content is not shown)"));
}

TEST_CASE("job key: derived from the user's key and the nonce, the id and the tag reveal neither key") {
  const std::string user_key(32, '\x01');
  const std::string nonce = make_job_nonce(), other_nonce = make_job_nonce();
  const std::string job = derive_job_key(user_key, nonce);
  CHECK(job.size() == 64);
  CHECK(job == derive_job_key(user_key, nonce));
  CHECK(job != derive_job_key(user_key, other_nonce));
  CHECK(job != derive_job_key(std::string(32, '\x02'), nonce));
  CHECK(key_id(user_key).size() == 16);
  CHECK(key_id(user_key) != key_id(std::string(32, '\x02')));
  CHECK(make_job_tag().size() == 16);
  CHECK(make_job_tag() != make_job_tag());
  CHECK_THROWS_WITH(derive_job_key(user_key, "abc"), "POPDIST_CHANNEL_NONCE holds 3 characters, expected 64 hex digits");
}

TEST_CASE("job key: the agent's side, by either route, and what it says when the file route fails") {
  TempHome home;
  const std::string path = home.path + "/.popdist/channel.key";
  const std::string user_key = load_or_make_user_key(path);
  const std::string nonce = make_job_nonce();
  const std::string tag = make_job_tag();
  const JobKey by_file = job_key_from_environment(lookup_in(
      {{"HOME", home.path}, {kNonceVariable, nonce}, {kTagVariable, tag}, {kKeyIdVariable, key_id(user_key)}}));
  CHECK(by_file.key == derive_job_key(user_key, nonce));
  CHECK(by_file.tag == tag);
  const std::string secret(64, 'c');
  CHECK(job_key_from_environment(lookup_in({{kNonceVariable, nonce}, {kTagVariable, tag}, {kSecretVariable, secret}}))
            .key == secret);
  CHECK_THROWS_WITH(job_key_from_environment(lookup_in({{kNonceVariable, nonce}, {kTagVariable, tag},
                                                        {kKeyIdVariable, "0123456789abcdef"}, {"HOME", home.path}})),
                    "the channel's key file " + path + " on this host has id " + key_id(user_key) +
                        ", popdist run's has 0123456789abcdef (a home not shared?): copy the launching host's, or "
                        "run popdist run with POPDIST_CHANNEL_KEY_ROUTE=environment");
  CHECK_THROWS_WITH(job_key_from_environment(lookup_in({{kNonceVariable, nonce}, {kTagVariable, tag},
                                                        {kKeyIdVariable, key_id(user_key)},
                                                        {"HOME", home.path + "/nowhere"}})),
                    Catch::Contains("cannot be read") &&
                        Catch::EndsWith("on this host (no shared home?): popdist run with "
                                        "POPDIST_CHANNEL_KEY_ROUTE=environment sends the key in mpirun's environment instead"));
  CHECK_THROWS_WITH(job_key_from_environment(lookup_in({})), Catch::StartsWith("POPDIST_CHANNEL_NONCE is not set"));
  CHECK_THROWS_WITH(job_key_from_environment(lookup_in({{kNonceVariable, nonce}})),
                    "POPDIST_CHANNEL_TAG is not set: expected the 16 hex digits popdist run exports to its agents");
  CHECK_THROWS_WITH(job_key_from_environment(lookup_in({{kNonceVariable, nonce}, {kTagVariable, tag}})),
                    Catch::StartsWith("POPDIST_CHANNEL_KEY_ID is not set"));
}

TEST_CASE("job key: the route is 'file' unless set to 'environment', anything else is named") {
  CHECK(key_route(lookup_in({})) == KeyRoute::kFile);
  CHECK(key_route(lookup_in({{kKeyRouteVariable, "environment"}})) == KeyRoute::kEnvironment);
  CHECK_THROWS_WITH(key_route(lookup_in({{kKeyRouteVariable, "env"}})),
                    Catch::StartsWith("POPDIST_CHANNEL_KEY_ROUTE=env: expected 'file' (the default"));
}
