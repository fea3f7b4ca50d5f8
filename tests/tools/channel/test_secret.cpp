// The job's secret (tools/channel/secret.hpp): random, compared in constant time, read from the
// environment only, never printed.
#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "channel/secret.hpp"

using namespace popdist::cli::channel;

namespace {
EnvironmentLookup lookup_in(std::map<std::string, std::string> variables) {
  return [variables](const char* name) -> std::optional<std::string> {
    const auto found = variables.find(name);
    return found == variables.end() ? std::nullopt : std::optional<std::string>(found->second);
  };
}
}  // namespace

TEST_CASE("secrets are 64 hex digits and differ") {
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    const std::string secret = make_secret();
    CHECK(secret.size() == kSecretHexDigits);
    CHECK(secret.find_first_not_of("0123456789abcdef") == std::string::npos);
    seen.insert(secret);
  }
  CHECK(seen.size() == 100);
}

TEST_CASE("secrets compare equal only when equal") {
  const std::string secret = make_secret();
  CHECK(secrets_equal(secret, secret));
  std::string other = secret;
  other.back() = other.back() == '0' ? '1' : '0';
  CHECK_FALSE(secrets_equal(secret, other));
  CHECK_FALSE(secrets_equal(secret, secret.substr(1)));
  CHECK_FALSE(secrets_equal(secret, ""));
}

TEST_CASE("the secret is read from the environment and checked, its value never shown") {
  const std::string secret = make_secret();
  CHECK(secret_from_environment(lookup_in({{kSecretVariable, secret}})) == secret);
  CHECK_THROWS_WITH(secret_from_environment(lookup_in({})),
                    Catch::Contains("POPDIST_CHANNEL_SECRET is not set"));
  CHECK_THROWS_WITH(secret_from_environment(lookup_in({{kSecretVariable, "not-hex-but-secret"}})),
                    "POPDIST_CHANNEL_SECRET holds 18 characters, expected 64 hex digits (its value is not shown)");
  const std::string bad = std::string(63, 'a') + "z";
  CHECK_THROWS_WITH(secret_from_environment(lookup_in({{kSecretVariable, bad}})),
                    !Catch::Contains(bad));
}

TEST_CASE("mpirun exports the secret by name, without its value") {
  CHECK(mpirun_export_argument() == "-x POPDIST_CHANNEL_SECRET");
}
