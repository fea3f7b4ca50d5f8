#pragma once
// What the families' probes share: reading a launcher's variables strictly (pairs set together,
// alike variables agreeing) and the checks every identity must pass. Errors start with the
// family's name.

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "core/launchers/family.hpp"
#include "core/numbers.hpp"

namespace popdist::detail {

/// "RANK=3".
[[nodiscard]] std::string show(const Field& field);

/// The family's marker when its launcher started this process; otherwise POPDIST_LAUNCHER
/// forced the family (detect() only reads an absent family when forced).
inline constexpr const char* kForced = "POPDIST_LAUNCHER";

/// Why the family is being read: "TORCHELASTIC_RUN_ID is set" or "POPDIST_LAUNCHER=torchrun
/// is set", the start of "... but neither RANK nor WORLD_SIZE is".
[[nodiscard]] std::string cause(const Identity& identity);

/// Throws EnvironmentError "<family>: <message>".
[[noreturn]] void fail(Launcher launcher, const std::string& message);

[[nodiscard]] std::optional<Field> read_field(const EnvLookup& env, const std::string& name, Expect expect);

/// An index/count pair that must be set together ("a pair set by half is an error").
struct Pair {
  std::optional<Field> index;
  std::optional<Field> count;
};
[[nodiscard]] Pair read_pair(Launcher launcher, const EnvLookup& env, const std::string& index_name,
                             const std::string& count_name);

/// The rank/size pair, which the family cannot do without.
void read_rank_and_size(Identity& identity, const EnvLookup& env, const std::string& rank_name,
                        const std::string& size_name);

/// The local rank/size pair (both or neither).
void read_local(Identity& identity, const EnvLookup& env, const std::string& rank_name, const std::string& size_name);

/// The first set of several variables that mean the same thing; two set and different is an error.
[[nodiscard]] std::optional<Field> read_alike(Launcher launcher, const EnvLookup& env,
                                              const std::vector<std::string>& names, Expect expect);

/// A local rank whose local count the launcher may leave out (torch.distributed.launch before
/// elastic, Lightning's children, jsrun environments reduced to JSM_NAMESPACE_LOCAL_RANK): the
/// count, when set, must come with a rank.
void read_local_rank_maybe_alone(Identity& identity, const EnvLookup& env, const std::string& rank_name,
                                 const std::vector<std::string>& size_names);

/// A node index with an optional node count (GROUP_RANK alone is torchrun's documented host index).
[[nodiscard]] std::optional<Field> read_node(Launcher launcher, const EnvLookup& env,
                                             const std::vector<std::string>& index_names,
                                             const std::vector<std::string>& count_names);

/// The checks every family shares: indices within their counts, the host within the job.
[[nodiscard]] Identity validated(Identity identity);

/// The first of `names` that is set.
[[nodiscard]] std::optional<std::string> first_set(const EnvLookup& env, std::initializer_list<const char*> names);

}  // namespace popdist::detail
