#pragma once
// The job's key ("secret"): only processes that hold it may speak on the job's channel, and they
// prove it without sending it (session.hpp). 32 random bytes from the kernel (getrandom), as 64
// hex digits. How it reaches the agents is job_key.hpp's: derived on every host from the user's
// key file (the default), or -- the environment route -- exported with mpirun's `-x NAME` without
// a value, so it is never in a command line (`ps` shows command lines to every user), though
// mpirun's launch message carries it to remote daemons in clear. Compared in constant time.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace popdist::cli::channel {

/// The variable that carries the secret to the agents.
inline constexpr const char* kSecretVariable = "POPDIST_CHANNEL_SECRET";
/// Random bytes in a secret, and its length in hex digits.
inline constexpr std::size_t kSecretBytes = 32;
inline constexpr std::size_t kSecretHexDigits = 2 * kSecretBytes;

/// A new secret; throws std::system_error when the kernel has no randomness to give.
[[nodiscard]] std::string make_secret();

/// Whether `a` and `b` are equal, in a time that depends on their lengths only.
[[nodiscard]] bool secrets_equal(std::string_view a, std::string_view b);

/// The `-x` argument that exports the secret to mpirun's processes without writing its value.
[[nodiscard]] std::string mpirun_export_argument();

using EnvironmentLookup = std::function<std::optional<std::string>(const char* name)>;
/// The process's environment (getenv).
[[nodiscard]] EnvironmentLookup process_environment();

/// The secret from the environment; throws std::invalid_argument naming the variable when it is
/// missing or is not 64 hex digits (its value is never printed).
[[nodiscard]] std::string secret_from_environment(const EnvironmentLookup& lookup);

}  // namespace popdist::cli::channel
