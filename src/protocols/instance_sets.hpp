#pragma once
// Pure helpers for sets of instances: validation with clear errors, printing, a stable hash
// (the same on every instance, so it can choose MPI tags), and the tags derived from it.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "popdist/registry.hpp"

namespace popdist::detail {

/// "{0, 1, 3}": a set of up to 16 members, member by member. A larger one shortly, so that an
/// error naming a set of thousands of instances stays a line (and the Mismatch that carries it
/// stays small, handshake_message.hpp): runs of three or more consecutive members as
/// "first-last", at most 16 items (the first and last 8 around "..."), and the count:
/// "{0, 2-255} (255 instances)".
[[nodiscard]] std::string format_set(const std::vector<int>& members);
[[nodiscard]] std::string format_set(const InstanceSet& members);

/// popdist::checked_instances (arguments.hpp) for the registry: not empty, every value in
/// 0..num_instances-1, no duplicates. Returns them sorted. Throws UsageError naming `function`,
/// the offending values and the valid range.
[[nodiscard]] std::vector<int> validated_members(const std::vector<int>& participants, int num_instances,
                                                 const char* function);
/// The same for a std::set (which cannot hold duplicates).
[[nodiscard]] std::vector<int> validated_members(const InstanceSet& participants, int num_instances,
                                                 const char* function);

/// The position of `instance` among `sorted_members` (its rank in the set's communicator, its
/// slot in the protocols' schedules); the member count when it is not one of them.
[[nodiscard]] inline std::size_t position_of(const std::vector<int>& sorted_members, int instance) noexcept {
  const auto found = std::lower_bound(sorted_members.begin(), sorted_members.end(), instance);
  return found != sorted_members.end() && *found == instance ? static_cast<std::size_t>(found - sorted_members.begin())
                                                             : sorted_members.size();
}

/// FNV-1a over the sorted members: identical on every instance and every run.
[[nodiscard]] std::uint64_t set_hash(const std::vector<int>& sorted_members) noexcept;

/// Message kinds on popdist's control communicator. The handshake uses one fixed tag (see
/// handshake.cpp for why); the timed synchronize uses two tags per set, derived from its hash.
/// WaitedIn: a failed timed synchronize names the set it waited in (protocols/timed/waited_in.hpp).
enum class ControlTag : int { Handshake = 1, WaitedIn = 2, FirstSetTag = 16 };
enum class TimedKind : int { Arrived = 0, GaveUp = 1 };

/// A tag in [FirstSetTag, tag_ub] for (set, kind): different sets get different tags unless
/// their hashes collide modulo the tag space; the payloads carry the full hash, so a collision
/// is detected and the message ignored, never mistaken for another set's.
[[nodiscard]] int timed_tag(std::uint64_t hash, TimedKind kind, int tag_ub) noexcept;

/// The tag for MPI_Comm_create_group: in [0, tag_ub], derived from the set.
[[nodiscard]] int creation_tag(std::uint64_t hash, int tag_ub) noexcept;

/// Parses POPDIST_SYNC_TIMEOUT under the timeout rule of arguments.hpp: a positive number of
/// seconds ("2", "0.5", "1e-3"); std::nullopt when unset or "inf" (no default timeout); anything
/// else (empty, "abc", "-1", "0", "nan", "2s") throws EnvironmentError naming the variable.
[[nodiscard]] std::optional<double> parse_sync_timeout(const std::optional<std::string>& value);

/// Checks a timeout passed to synchronize under the rule of arguments.hpp (positive, or infinity
/// for no limit), else UsageError naming it.
void check_timeout_argument(double seconds);

}  // namespace popdist::detail
