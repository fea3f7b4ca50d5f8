#pragma once
// How the job's key reaches the agents without crossing the network (README.md "Threat model").
//
// The default route, "file": each user has a key of their own in a file on their home, made on
// first use like ~/.ssh's keys or MUNGE's (64 hex digits, mode 0600, in a 0700 directory; a file
// of another owner or open to others is refused), and every job derives its key from it with a
// public per-job nonce: job key = HKDF-SHA256(user key, salt: nonce, info: a label). Only the
// nonce and the key's id (a fingerprint: a MAC of a label under the key, which reveals nothing of
// it) travel in the agents' environment. This needs a home shared by the job's hosts (or the same
// file copied to each); an agent whose key file is missing, or whose id differs, cannot join the
// channel and says so (its program runs, unreported).
//
// The route "environment" (POPDIST_CHANNEL_KEY_ROUTE=environment for popdist run): the job's key
// itself goes to the agents in POPDIST_CHANNEL_SECRET (mpirun's `-x`): no shared home needed, but
// the key crosses the network in clear inside mpirun's launch message to each remote daemon.
//
// The job's tag in the relays' socket names (POPDIST_CHANNEL_TAG): 16 random hex digits, not
// derived from any key, exported by name only (its value in mpirun's environment, on no command
// line), so another user of a host cannot learn it from `ps` and bind the name before the job's
// agents do.

#include <string>
#include <string_view>

#include "channel/secret.hpp"  // EnvironmentLookup, kSecretVariable

namespace popdist::cli::channel {

/// The job's public nonce (64 hex digits), in every route.
inline constexpr const char* kNonceVariable = "POPDIST_CHANNEL_NONCE";
/// The id of the user key the job's key was derived from (16 hex digits), in the file route.
inline constexpr const char* kKeyIdVariable = "POPDIST_CHANNEL_KEY_ID";
/// The user's key file when not ~/.popdist/channel.key (the same path on every host).
inline constexpr const char* kKeyFileVariable = "POPDIST_CHANNEL_KEY_FILE";
/// The job's tag in socket names (16 hex digits), in every route.
inline constexpr const char* kTagVariable = "POPDIST_CHANNEL_TAG";
/// popdist run's choice of route: "file" (the default) or "environment".
inline constexpr const char* kKeyRouteVariable = "POPDIST_CHANNEL_KEY_ROUTE";

enum class KeyRoute { kFile, kEnvironment };

/// The route from kKeyRouteVariable; throws std::invalid_argument naming it, its value and the choices.
[[nodiscard]] KeyRoute key_route(const EnvironmentLookup& lookup);

/// kKeyFileVariable, else $HOME/.popdist/channel.key (the password database's home without HOME).
[[nodiscard]] std::string key_file_path(const EnvironmentLookup& lookup);

/// The user's key (32 bytes) from `path`, made first when missing (its directory 0700, the file
/// 0600, written whole under another name and linked into place, so two launches never see half
/// a key). Throws std::runtime_error naming the path and what is wrong with it.
[[nodiscard]] std::string load_or_make_user_key(const std::string& path);
/// The same without making it: missing is an error.
[[nodiscard]] std::string read_user_key(const std::string& path);

/// The key's id: 16 hex digits, a MAC of a fixed label under the key.
[[nodiscard]] std::string key_id(std::string_view user_key);
/// The job's key, 64 hex digits, from the user's key and the job's nonce (64 hex digits).
[[nodiscard]] std::string derive_job_key(std::string_view user_key, std::string_view nonce_hex);
/// A new job nonce: 64 hex digits from getrandom.
[[nodiscard]] std::string make_job_nonce();
/// A new tag for the job's socket names: 16 hex digits from getrandom.
[[nodiscard]] std::string make_job_tag();

/// The agent's side: the job's key and tag from its environment, by the route popdist run chose
/// (kSecretVariable set: the environment route; else the key file and kKeyIdVariable). Throws
/// std::invalid_argument naming the variable or the key file, what was wrong and what to do.
struct JobKey {
  std::string key;  ///< 64 hex digits
  std::string tag;
};
[[nodiscard]] JobKey job_key_from_environment(const EnvironmentLookup& lookup);

}  // namespace popdist::cli::channel
