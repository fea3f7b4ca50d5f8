// The readers the families' probes share (see reading.hpp).

#include "core/launchers/reading.hpp"

#include <fmt/format.h>

#include <utility>

#include "popdist/error.hpp"

namespace popdist::detail {

std::string show(const Field& field) { return fmt::format("{}={}", field.source, field.value); }

std::string cause(const Identity& identity) {
  if (identity.detected_by == kForced) return fmt::format("{}={} is set", kForced, launcher_name(identity.launcher));
  return identity.detected_by + " is set";
}

void fail(Launcher launcher, const std::string& message) {
  throw EnvironmentError(fmt::format("{}: {}", launcher_name(launcher), message));
}

std::optional<Field> read_field(const EnvLookup& env, const std::string& name, Expect expect) {
  const auto number = read_number(env, name, expect);
  if (!number) return std::nullopt;
  return Field{number->value, number->source};
}

Pair read_pair(Launcher launcher, const EnvLookup& env, const std::string& index_name,
               const std::string& count_name) {
  Pair pair{read_field(env, index_name, Expect::NonNegative), read_field(env, count_name, Expect::Positive)};
  if (pair.index && !pair.count) {
    fail(launcher, fmt::format("{} is set but {} is not; expected both or neither", show(*pair.index), count_name));
  }
  if (pair.count && !pair.index) {
    fail(launcher, fmt::format("{} is set but {} is not; expected both or neither", show(*pair.count), index_name));
  }
  return pair;
}

void read_rank_and_size(Identity& identity, const EnvLookup& env, const std::string& rank_name,
                        const std::string& size_name) {
  const auto pair = read_pair(identity.launcher, env, rank_name, size_name);
  if (!pair.index) {
    fail(identity.launcher, fmt::format("{} but neither {} nor {} is; expected the process's rank and the job's "
                                        "size",
                                        cause(identity), rank_name, size_name));
  }
  identity.rank = *pair.index;
  identity.size = *pair.count;
}

void read_local(Identity& identity, const EnvLookup& env, const std::string& rank_name,
                const std::string& size_name) {
  auto pair = read_pair(identity.launcher, env, rank_name, size_name);
  identity.local_rank = std::move(pair.index);
  identity.local_size = std::move(pair.count);
}

std::optional<Field> read_alike(Launcher launcher, const EnvLookup& env, const std::vector<std::string>& names,
                                Expect expect) {
  std::optional<Field> first;
  for (const auto& name : names) {
    const auto field = read_field(env, name, expect);
    if (!field) continue;
    if (!first) {
      first = field;
    } else if (field->value != first->value) {
      fail(launcher, fmt::format("{} and {} disagree; expected the same value", show(*first), show(*field)));
    }
  }
  return first;
}

void read_local_rank_maybe_alone(Identity& identity, const EnvLookup& env, const std::string& rank_name,
                                 const std::vector<std::string>& size_names) {
  identity.local_rank = read_field(env, rank_name, Expect::NonNegative);
  identity.local_size = read_alike(identity.launcher, env, size_names, Expect::Positive);
  if (identity.local_size && !identity.local_rank) {
    fail(identity.launcher, fmt::format("{} is set but {} is not; expected both or neither", show(*identity.local_size),
                                        rank_name));
  }
}

std::optional<Field> read_node(Launcher launcher, const EnvLookup& env, const std::vector<std::string>& index_names,
                               const std::vector<std::string>& count_names) {
  const auto node = read_alike(launcher, env, index_names, Expect::NonNegative);
  const auto count = read_alike(launcher, env, count_names, Expect::Positive);
  if (count && !node) {
    std::string names;
    for (const auto& name : index_names) names += (names.empty() ? "" : " or ") + name;
    fail(launcher, fmt::format("{} is set but {} is not; expected a node index with the node count", show(*count),
                               names));
  }
  if (node && count && node->value >= count->value) {
    fail(launcher, fmt::format("{} is not less than {}; expected a node index in 0..{}", show(*node), show(*count),
                               count->value - 1));
  }
  return node;
}

Identity validated(Identity identity) {
  const auto launcher = identity.launcher;
  if (identity.rank.value >= identity.size.value) {
    fail(launcher, fmt::format("{} is not less than {}; expected a rank in 0..{}", show(identity.rank),
                               show(identity.size), identity.size.value - 1));
  }
  if (identity.local_rank && identity.local_size) {
    if (identity.local_rank->value >= identity.local_size->value) {
      fail(launcher, fmt::format("{} is not less than {}; expected a local rank in 0..{}", show(*identity.local_rank),
                                 show(*identity.local_size), identity.local_size->value - 1));
    }
    if (identity.local_size->value > identity.size.value) {
      fail(launcher, fmt::format("{} is larger than {}; expected at most as many processes on a node as in the job",
                                 show(*identity.local_size), show(identity.size)));
    }
  }
  if (identity.local_rank && !identity.local_size && identity.local_rank->value >= identity.size.value) {
    fail(launcher, fmt::format("{} is not less than {}; expected a local rank in 0..{}", show(*identity.local_rank),
                               show(identity.size), identity.size.value - 1));
  }
  if (identity.node && identity.node->value >= identity.size.value) {
    fail(launcher, fmt::format("{} is not less than {}; expected a node index in 0..{} (every node runs at least "
                               "one process)",
                               show(*identity.node), show(identity.size), identity.size.value - 1));
  }
  return identity;
}

std::optional<std::string> first_set(const EnvLookup& env, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (env(name)) return std::string(name);
  }
  return std::nullopt;
}

std::string Identity::summary() const {
  return fmt::format("{} rank {} of {} ({}, {})", launcher_name(launcher), rank.value, size.value, show(rank),
                     show(size));
}

}  // namespace popdist::detail
