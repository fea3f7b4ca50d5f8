#include "channel/secret.hpp"

#include <cstdlib>
#include <stdexcept>

#include "channel/crypto.hpp"

namespace popdist::cli::channel {

std::string make_secret() { return crypto::to_hex(crypto::random_bytes(kSecretBytes)); }

bool secrets_equal(std::string_view a, std::string_view b) { return crypto::equal(a, b); }

std::string mpirun_export_argument() { return std::string("-x ") + kSecretVariable; }

EnvironmentLookup process_environment() {
  return [](const char* name) -> std::optional<std::string> {
    const char* value = std::getenv(name);
    return value ? std::optional<std::string>(value) : std::nullopt;
  };
}

std::string secret_from_environment(const EnvironmentLookup& lookup) {
  const auto value = lookup(kSecretVariable);
  if (!value)
    throw std::invalid_argument(std::string(kSecretVariable) +
                                " is not set: the job's channel needs the secret popdist run exports to its agents");
  if (value->size() != kSecretHexDigits || !crypto::from_hex(*value))
    throw std::invalid_argument(std::string(kSecretVariable) + " holds " + std::to_string(value->size()) +
                                " characters, expected " + std::to_string(kSecretHexDigits) +
                                " hex digits (its value is not shown)");
  return *value;
}

}  // namespace popdist::cli::channel
