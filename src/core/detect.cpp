// detect(): the launcher's identity plus PopRun's POPDIST_* contract -> Topology
// (design.md §3). Pure: a function of the lookup, no MPI, no I/O, no logging.
//
// Where design.md §3.2 is silent it decides (each decision has its unit tests; the launchers guide,
// docs/guide/launchers.md, "How detection decides", lists them): the "popdist" family when a
// replica variable is set without a launcher, a required offset for non-uniform replicas under a
// launcher, a malformed lower-priority family only warning, never a silent singleton, and
// POPDIST_LAUNCHER reading a family whose marker is absent.

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/launchers/family.hpp"
#include "core/numbers.hpp"
#include "core/poprun_variables.hpp"
#include "core/unused_variables.hpp"
#include "popdist/error.hpp"
#include "popdist/topology.hpp"
#include "popdist/topology_fields.hpp"

namespace popdist {
namespace {

using detail::Expect;
using detail::Field;
using detail::Identity;
using detail::Number;
using detail::read_number;

using namespace detail::poprun;  // PopRun's variables, kTotal ... kLocalInstance

constexpr const char* kLauncherVariable = "POPDIST_LAUNCHER";

std::string show(const Number& number) { return fmt::format("{}={}", number.source, number.value); }
std::string show(const Field& field) { return fmt::format("{}={}", field.source, field.value); }

/// Which family supplies the identity, and why.
struct Choice {
  Launcher launcher = Launcher::Singleton;
  std::string source = "default";   ///< provenance of "launcher"
  std::optional<Identity> identity;  ///< std::nullopt for the popdist family (no launcher)
  bool forced = false;
  std::vector<std::string> warnings;  ///< e.g. a forced family whose marker is missing
};

Choice choose_forced(const EnvLookup& env, const std::string& value, const std::optional<MpiWorld>& world) {
  const auto launcher = parse_launcher_name(value);
  if (!launcher) {
    throw EnvironmentError(fmt::format("{}='{}' is not a launcher name; expected one of {}", kLauncherVariable,
                                       detail::printable(value), detail::family_names()));
  }
  Choice choice{*launcher, kLauncherVariable, std::nullopt, true, {}};
  const auto& family = detail::find_family(*launcher);
  if (family.forced) {
    choice.identity = family.forced(world, choice.warnings);
  } else if (family.is_launch()) {
    if (family.present(env)) {
      choice.identity = family.read(env);
      return choice;
    }
    // Forced without its marker (e.g. torch.distributed.launch, which docs/guide/launchers.md sends here):
    // the family's identity variables must then be complete on their own.
    std::string markers;
    for (const auto& marker : family.markers) markers += (markers.empty() ? "" : ", ") + marker;
    try {
      choice.identity = family.read(env);
    } catch (const EnvironmentError& error) {
      throw EnvironmentError(fmt::format("{}={} but none of the {} launcher's variables is set ({}){}, and its "
                                         "identity cannot be read without them ({}); expected a process started by "
                                         "that launcher",
                                         kLauncherVariable, value, value, markers, family.forced_hint,
                                         error.what()));
    }
    choice.warnings.push_back(fmt::format("{}={} but none of the {} launcher's variables is set ({}); reading its "
                                          "identity anyway: {}",
                                          kLauncherVariable, value, value, markers, choice.identity->summary()));
  }
  return choice;
}

bool any_set(const EnvLookup& env, const char* const* begin, const char* const* end) {
  for (auto it = begin; it != end; ++it) {
    if (env(*it)) return true;
  }
  return false;
}

/// The first family present in priority order (popdist, present through PopRun's variables,
/// has no identity of its own), else the singleton.
Choice choose(const EnvLookup& env, const std::optional<MpiWorld>& world) {
  if (const auto forced = env(kLauncherVariable)) return choose_forced(env, *forced, world);
  for (const auto& family : detail::launcher_families()) {
    if (!family.present) continue;
    if (auto marker = family.present(env)) {
      return Choice{family.launcher, *marker, family.read ? std::optional(family.read(env)) : std::nullopt, false, {}};
    }
  }
  return Choice{Launcher::Singleton, "default", detail::singleton_identity(), false, {}};
}

/// Warnings for every other family that is present and describes a different rank or size
/// (e.g. mpirun inside salloc: SLURM_* describe mpirun's daemon step), and for hints that this
/// process sits in an allocation without having been launched.
std::vector<std::string> conflict_warnings(const EnvLookup& env, const Choice& choice, const Topology& topology) {
  std::vector<std::string> warnings;
  const std::string chosen = fmt::format("{} instance {} of {}", launcher_name(choice.launcher),
                                         topology.instance_index, topology.num_instances);
  const std::string reason =
      choice.forced ? fmt::format("forced by {}", kLauncherVariable) : std::string("which has priority");
  const auto& chosen_family = detail::find_family(choice.launcher);
  const auto& own_variables_of = chosen_family.sets_variables_of;
  bool passed_chosen = false;
  for (const auto* probe : detail::launch_families()) {
    if (probe->launcher == choice.launcher) {
      passed_chosen = true;
      continue;
    }
    // Unforced, a present higher-priority family would have been chosen: only lower ones remain.
    if (!choice.forced && !passed_chosen) continue;
    if (!probe->present(env)) continue;
    // The chosen launcher's own variables under another family's names are not a second launch.
    if (std::find(own_variables_of.begin(), own_variables_of.end(), probe->launcher) != own_variables_of.end()) continue;
    try {
      const auto other = probe->read(env);
      if (other.rank.value != topology.instance_index || other.size.value != topology.num_instances) {
        warnings.push_back(fmt::format("{} disagrees with {}; using {}, {}", other.summary(), chosen,
                                       launcher_name(choice.launcher), reason));
      }
    } catch (const EnvironmentError& error) {
      warnings.push_back(fmt::format("ignoring malformed {} variables ({}); using {}, {}",
                                     probe->name, error.what(), launcher_name(choice.launcher),
                                     reason));
    }
  }
  return warnings;
}

/// Never a silent singleton: without a launcher family, every variable that states part of a
/// launch is named with the reason it was not used; an index > 0 among them is an error unless
/// POPDIST_LAUNCHER=singleton (or PopRun's variables state the instance).
std::vector<std::string> unused_variable_warnings(const EnvLookup& env, const Choice& choice) {
  std::vector<std::string> warnings;
  if (choice.launcher != Launcher::Singleton && choice.launcher != Launcher::PopDist) return warnings;
  const auto unused = detail::unused_launch_variables(env);
  const std::string using_text = fmt::format("using {}", launcher_name(choice.launcher));
  std::vector<detail::UnusedVariable> others = unused;
  for (const auto* family : detail::launch_families()) {
    if (!family->allocation_without_launch) continue;
    const auto allocation = family->allocation_without_launch(env);
    if (!allocation) continue;
    // The allocation's own variables (SLURM_PROCID=0 in an sbatch script) belong to this warning.
    std::vector<detail::UnusedVariable> own;
    const auto is_own = [&](const auto& variable) { return variable.family == family->launcher; };
    std::copy_if(others.begin(), others.end(), std::back_inserter(own), is_own);
    others.erase(std::remove_if(others.begin(), others.end(), is_own), others.end());
    const std::string leftovers =
        own.empty() ? std::string()
                    : fmt::format(" ({} {} not used)", detail::join_shown(own), own.size() == 1 ? "is" : "are");
    warnings.push_back(fmt::format("{}{}; {}", *allocation, leftovers, using_text));
  }
  if (!others.empty()) {
    warnings.push_back(fmt::format("{} {} no launch ({}); {}", detail::join_shown(others),
                                   others.size() == 1 ? "is set but forms" : "are set but form", detail::join_reasons(others), using_text));
  }
  std::vector<detail::UnusedVariable> not_first;
  std::copy_if(unused.begin(), unused.end(), std::back_inserter(not_first),
               [](const auto& variable) { return variable.not_first; });
  if (!not_first.empty() && choice.launcher == Launcher::Singleton && !choice.forced) {
    throw EnvironmentError(fmt::format("{} {} that this process is not the job's first, but no launcher family is "
                                       "formed from {} ({}), so it would run as the only instance (singleton); "
                                       "expected the launcher's complete variables, or {}=singleton to run it alone "
                                       "anyway",
                                       detail::join_shown(not_first), not_first.size() == 1 ? "states" : "state",
                                       not_first.size() == 1 ? "it" : "them", detail::join_reasons(not_first),
                                       kLauncherVariable));
  }
  return warnings;
}

/// POPDIST_* values as read (std::nullopt when unset).
struct Contract {
  std::optional<Number> total, local, offset, ipus, uniform, local_instance;
};

Contract read_contract(const EnvLookup& env) {
  Contract contract;
  contract.total = read_number(env, kTotal, Expect::Positive);
  contract.local = read_number(env, kLocal, Expect::Positive);
  contract.offset = read_number(env, kOffset, Expect::NonNegative);
  contract.ipus = read_number(env, kIpus, Expect::Positive);
  contract.uniform = read_number(env, kUniform, Expect::NonNegative);
  contract.local_instance = read_number(env, kLocalInstance, Expect::NonNegative);
  if (contract.uniform && contract.uniform->value > 1) {
    throw EnvironmentError(fmt::format("{} is neither 0 nor 1; expected 0 (replicas differ between instances) or 1 "
                                       "(every instance has the same number)",
                                       show(*contract.uniform)));
  }
  return contract;
}

/// Replicas under a launcher: instances and index come from the launcher.
void apply_replicas_with_launcher(Topology& t, const Contract& c, const Identity& id) {
  const std::int64_t uniform_total = static_cast<std::int64_t>(t.num_local_replicas) * id.size.value;
  const std::string local_text = c.local ? show(*c.local) : fmt::format("{} replica(s) per instance (default)", 1);
  if (c.total) {
    t.num_total_replicas = c.total->value;
    source_of(t, field::num_total_replicas) = kTotal;
  } else {
    if (uniform_total > INT32_MAX) {
      throw EnvironmentError(fmt::format("{} x {} = {} replicas in total, more than {}; expected a total that fits",
                                         local_text, show(id.size), uniform_total, INT32_MAX));
    }
    t.num_total_replicas = static_cast<int>(uniform_total);
    source_of(t, field::num_total_replicas) = "derived";
  }
  const bool total_is_uniform = t.num_total_replicas == uniform_total;
  if (c.uniform) {
    t.uniform_replicas_per_instance = c.uniform->value == 1;
    source_of(t, field::uniform_replicas_per_instance) = kUniform;
    if (t.uniform_replicas_per_instance && !total_is_uniform) {
      throw EnvironmentError(fmt::format("{} but {} is not {} x {} = {}; expected the total to be the local replicas "
                                         "times the instances",
                                         show(*c.uniform), show(*c.total), local_text, show(id.size), uniform_total));
    }
  } else {
    t.uniform_replicas_per_instance = total_is_uniform;
    source_of(t, field::uniform_replicas_per_instance) = "derived";
  }
  if (t.num_total_replicas < id.size.value) {
    throw EnvironmentError(fmt::format("{} is less than the {} instances ({}); expected at least one replica per "
                                       "instance",
                                       show(*c.total), id.size.value, show(id.size)));
  }
  const std::int64_t expected_offset = static_cast<std::int64_t>(id.rank.value) * t.num_local_replicas;
  if (c.offset) {
    t.replica_index_offset = c.offset->value;
    source_of(t, field::replica_index_offset) = kOffset;
    if (t.uniform_replicas_per_instance && c.offset->value != expected_offset) {
      // Uniformity stated by the variable, or derived from total == local x instances: either
      // way instance i must own [i x local, (i + 1) x local), or the launcher's rank order and
      // PopRun's replica order disagree.
      const std::string why =
          c.uniform ? show(*c.uniform)
                    : fmt::format("uniform replicas per instance (derived: {} = {} x {}; if replicas differ between "
                                  "instances, set {}=0)",
                                  t.num_total_replicas, local_text, show(id.size), kUniform);
      throw EnvironmentError(fmt::format("{} but instance {} ({}) with {} must start at replica {}; expected {}={} "
                                         "under {}",
                                         show(*c.offset), id.rank.value, show(id.rank), local_text, expected_offset,
                                         kOffset, expected_offset, why));
    }
  } else if (total_is_uniform) {
    // total == local x instances, so instance x local is the only offset that can tile the job
    // (it fits in int: it is less than total).
    t.replica_index_offset = static_cast<int>(expected_offset);
    source_of(t, field::replica_index_offset) = "derived";
  } else {
    throw EnvironmentError(fmt::format("{} is not {} x {} = {} (replicas differ between instances), so {} is needed "
                                       "and is not set; expected each instance's first replica index in {}",
                                       show(*c.total), local_text, show(id.size), uniform_total, kOffset, kOffset));
  }
}

/// Replicas without a launcher: the instance can only be derived under uniform replicas.
void apply_replicas_without_launcher(Topology& t, const Contract& c) {
  const auto need_launcher = [](const std::string& why) {
    throw EnvironmentError(fmt::format("{}: without a launcher the instance index and count are derived as offset / "
                                       "local and total / local, which needs uniform replicas per instance; expected "
                                       "uniform values, or a launcher (popdist run, mpirun, srun, torchrun) for "
                                       "non-uniform replicas",
                                       why));
  };
  const int local = t.num_local_replicas;
  const std::string local_text = c.local ? show(*c.local) : std::string("1 local replica (default)");
  if (c.uniform && c.uniform->value == 0) need_launcher(show(*c.uniform) + " says replicas are not uniform");
  t.uniform_replicas_per_instance = true;
  source_of(t, field::uniform_replicas_per_instance) = c.uniform ? kUniform : "derived";
  if (c.total) {
    t.num_total_replicas = c.total->value;
    source_of(t, field::num_total_replicas) = kTotal;
  } else {
    // One instance: it drives every replica.
    t.num_total_replicas = local;
    source_of(t, field::num_total_replicas) = "derived";
  }
  if (t.num_total_replicas % local != 0) {
    need_launcher(fmt::format("{} is not a multiple of {}", show(*c.total), local_text));
  }
  t.replica_index_offset = c.offset ? c.offset->value : 0;
  source_of(t, field::replica_index_offset) = c.offset ? kOffset : "default";
  if (c.offset && c.offset->value % local != 0) {
    need_launcher(fmt::format("{} is not a multiple of {}", show(*c.offset), local_text));
  }
  t.num_instances = t.num_total_replicas / local;
  t.instance_index = t.replica_index_offset / local;
  source_of(t, field::num_instances) = "derived";
  source_of(t, field::instance_index) = t.replica_index_offset == 0 && !c.offset ? "default" : "derived";
}

/// The local instance index/count: POPDIST_LOCAL_INSTANCE_INDEX, else the launcher's local
/// rank/size, else 0 of 1.
void apply_local_instance(Topology& t, const Contract& c, const std::optional<Identity>& id) {
  const bool launcher_local = id && id->local_size;
  // A launcher that gives a local rank but no local count (LOCAL_RANK alone): the rank is the
  // index, and rank + 1 is the least number of instances there can be on the host.
  const bool launcher_rank_only = id && id->local_rank && !id->local_size;
  if (launcher_local) {
    t.num_local_instances = id->local_size->value;
    source_of(t, field::num_local_instances) = id->local_size->source;
  }
  if (c.local_instance) {
    t.local_instance_index = c.local_instance->value;
    source_of(t, field::local_instance_index) = kLocalInstance;
    if (launcher_local && c.local_instance->value >= id->local_size->value) {
      throw EnvironmentError(fmt::format("{} is not less than {} (the launcher's processes on this node); expected a "
                                         "local instance index in 0..{}",
                                         show(*c.local_instance), show(*id->local_size), id->local_size->value - 1));
    }
    if (c.local_instance->value >= t.num_instances) {
      throw EnvironmentError(fmt::format("{} is not less than the job's {} instance(s) ({}); expected a local "
                                         "instance index in 0..{}",
                                         show(*c.local_instance), t.num_instances,
                                         source_of(t, field::num_instances), t.num_instances - 1));
    }
    if (launcher_rank_only && c.local_instance->value != id->local_rank->value) {
      throw EnvironmentError(fmt::format("{} and {} disagree; expected the same local instance index",
                                         show(*c.local_instance), show(*id->local_rank)));
    }
    if (!launcher_local) {
      // Nothing says how many instances share the host; index + 1 is the least there can be.
      t.num_local_instances = c.local_instance->value + 1;
      source_of(t, field::num_local_instances) = "derived";
    }
  } else if (launcher_local) {
    t.local_instance_index = id->local_rank->value;
    source_of(t, field::local_instance_index) = id->local_rank->source;
  } else if (launcher_rank_only) {
    t.local_instance_index = id->local_rank->value;
    source_of(t, field::local_instance_index) = id->local_rank->source;
    t.num_local_instances = id->local_rank->value + 1;
    source_of(t, field::num_local_instances) = "derived";
  } else {
    t.local_instance_index = 0;
    t.num_local_instances = 1;
    source_of(t, field::local_instance_index) = "default";
    source_of(t, field::num_local_instances) = "default";
  }
}

/// The invariants of design.md §3.3 that every topology must satisfy, whatever produced it.
void check_invariants(const Topology& t) {
  const auto field = [&](const char* name) {
    const auto found = t.provenance.find(name);
    return found == t.provenance.end() ? std::string("unknown") : found->second;
  };
  const std::int64_t end = static_cast<std::int64_t>(t.replica_index_offset) + t.num_local_replicas;
  if (end > t.num_total_replicas) {
    throw EnvironmentError(fmt::format("replica_index_offset {} ({}) + num_local_replicas {} ({}) = {} exceeds "
                                       "num_total_replicas {} ({}); expected this instance's replicas "
                                       "[offset, offset + local) to lie within 0..{}",
                                       t.replica_index_offset, field("replica_index_offset"), t.num_local_replicas,
                                       field("num_local_replicas"), end, t.num_total_replicas,
                                       field("num_total_replicas"), t.num_total_replicas - 1));
  }
}

Topology detect_with(const EnvLookup& env, const std::optional<MpiWorld>& world) {
  const Contract contract = read_contract(env);
  const Choice choice = choose(env, world);

  Topology t;
  t.launcher = choice.launcher;
  source_of(t, field::launcher) = choice.source;

  t.num_local_replicas = contract.local ? contract.local->value : 1;
  source_of(t, field::num_local_replicas) = contract.local ? kLocal : "default";
  t.ipus_per_replica = contract.ipus ? contract.ipus->value : 1;
  source_of(t, field::ipus_per_replica) = contract.ipus ? kIpus : "default";
  t.ipus_per_replica_set = contract.ipus.has_value();

  if (choice.identity) {
    const Identity& id = *choice.identity;
    t.instance_index = id.rank.value;
    t.num_instances = id.size.value;
    source_of(t, field::instance_index) = id.rank.source;
    source_of(t, field::num_instances) = id.size.source;
    t.host_index = id.node ? std::optional<int>(id.node->value) : std::nullopt;
    source_of(t, field::host_index) = id.node ? id.node->source : "default";
    apply_replicas_with_launcher(t, contract, id);
  } else {
    // PopRun's variables alone give no host: leave it unknown rather than guess.
    t.host_index = std::nullopt;
    source_of(t, field::host_index) = "default";
    apply_replicas_without_launcher(t, contract);
  }
  apply_local_instance(t, contract, choice.identity);
  check_invariants(t);

  t.popdist_env_set = choice.launcher != Launcher::Singleton ||
                      any_set(env, std::begin(kContractVariables), std::end(kContractVariables));
  t.warnings = choice.warnings;
  for (auto& warning : conflict_warnings(env, choice, t)) t.warnings.push_back(std::move(warning));
  for (auto& warning : unused_variable_warnings(env, choice)) t.warnings.push_back(std::move(warning));
  return t;
}

}  // namespace

Topology detect(const EnvLookup& env) { return detect_with(env, std::nullopt); }

Topology detect(const EnvLookup& env, const MpiWorld& world) {
  if (world.size < 1 || world.rank < 0 || world.rank >= world.size) {
    throw EnvironmentError(fmt::format("MPI world rank {} of size {}: expected 0 <= rank < size", world.rank,
                                       world.size));
  }
  return detect_with(env, world);
}

}  // namespace popdist
