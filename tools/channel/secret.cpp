#include "channel/secret.hpp"

#include <sys/random.h>

#include <cerrno>
#include <cstdlib>
#include <stdexcept>
#include <system_error>

namespace popdist::cli::channel {
namespace {

std::string hex(const unsigned char* bytes, std::size_t count) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text;
  text.reserve(2 * count);
  for (std::size_t i = 0; i < count; ++i) text += kDigits[bytes[i] >> 4], text += kDigits[bytes[i] & 0xf];
  return text;
}

bool is_hex(std::string_view text) {
  for (const char c : text)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) return false;
  return true;
}

}  // namespace

std::string make_secret() {
  unsigned char bytes[kSecretBytes];
  std::size_t filled = 0;
  while (filled < kSecretBytes) {
    const ssize_t got = getrandom(bytes + filled, kSecretBytes - filled, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw std::system_error(errno, std::generic_category(), "getrandom for the channel's secret");
    filled += static_cast<std::size_t>(got);
  }
  return hex(bytes, kSecretBytes);
}

bool secrets_equal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char difference = 0;
  for (std::size_t i = 0; i < a.size(); ++i) difference |= static_cast<unsigned char>(a[i] ^ b[i]);
  return difference == 0;
}

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
  if (value->size() != kSecretHexDigits || !is_hex(*value))
    throw std::invalid_argument(std::string(kSecretVariable) + " holds " + std::to_string(value->size()) +
                                " characters, expected " + std::to_string(kSecretHexDigits) +
                                " hex digits (its value is not shown)");
  return *value;
}

std::string job_tag(std::string_view secret) {
  std::uint64_t hash = 14695981039346656037ull;  // FNV-1a, 64 bits
  for (const char c : secret) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  unsigned char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<unsigned char>(hash >> (56 - 8 * i));
  return hex(bytes, 8);
}

}  // namespace popdist::cli::channel
