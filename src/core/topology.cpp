// Launcher names and the Topology value's comparison and printing.

#include <fmt/format.h>

#include <array>
#include <ostream>
#include <utility>

#include "popdist/topology.hpp"

namespace popdist {
namespace {

constexpr std::array<std::pair<Launcher, std::string_view>, 11> kLauncherNames = {{
    {Launcher::Singleton, "singleton"},
    {Launcher::PopDist, "popdist"},
    {Launcher::OpenMpi, "openmpi"},
    {Launcher::Mpich, "mpich"},
    {Launcher::Pals, "pals"},
    {Launcher::Mvapich2, "mvapich2"},
    {Launcher::Slurm, "slurm"},
    {Launcher::Torchrun, "torchrun"},
    {Launcher::Horovod, "horovod"},
    {Launcher::Lsf, "lsf"},
    {Launcher::PyTorch, "pytorch"},
}};

std::string provenance_of(const Topology& topology, const std::string& field) {
  const auto found = topology.provenance.find(field);
  return found == topology.provenance.end() ? std::string("unknown") : found->second;
}

}  // namespace

std::string_view launcher_name(Launcher launcher) noexcept {
  for (const auto& [value, name] : kLauncherNames) {
    if (value == launcher) return name;
  }
  return "unknown";
}

std::optional<Launcher> parse_launcher_name(std::string_view name) noexcept {
  for (const auto& [value, known] : kLauncherNames) {
    if (known == name) return value;
  }
  return std::nullopt;
}

bool operator==(const Topology& a, const Topology& b) {
  // Every member, provenance and warnings included: two topologies are equal when they print the same.
  return a.launcher == b.launcher && a.instance_index == b.instance_index && a.num_instances == b.num_instances &&
         a.local_instance_index == b.local_instance_index && a.num_local_instances == b.num_local_instances &&
         a.host_index == b.host_index && a.num_local_replicas == b.num_local_replicas &&
         a.num_total_replicas == b.num_total_replicas && a.replica_index_offset == b.replica_index_offset &&
         a.ipus_per_replica == b.ipus_per_replica &&
         a.uniform_replicas_per_instance == b.uniform_replicas_per_instance &&
         a.popdist_env_set == b.popdist_env_set && a.ipus_per_replica_set == b.ipus_per_replica_set &&
         a.provenance == b.provenance && a.warnings == b.warnings;
}

std::string describe(const Topology& topology) {
  std::string text;
  const auto line = [&](std::string_view field, const std::string& value) {
    text += fmt::format("{:<30} {:<12} ({})\n", field, value, provenance_of(topology, std::string(field)));
  };
  line("launcher", std::string(launcher_name(topology.launcher)));
  line("instance_index", std::to_string(topology.instance_index));
  line("num_instances", std::to_string(topology.num_instances));
  line("local_instance_index", std::to_string(topology.local_instance_index));
  line("num_local_instances", std::to_string(topology.num_local_instances));
  line("host_index", topology.host_index ? std::to_string(*topology.host_index) : std::string("unknown"));
  line("num_local_replicas", std::to_string(topology.num_local_replicas));
  line("num_total_replicas", std::to_string(topology.num_total_replicas));
  line("replica_index_offset", std::to_string(topology.replica_index_offset));
  line("ipus_per_replica", std::to_string(topology.ipus_per_replica));
  line("uniform_replicas_per_instance", topology.uniform_replicas_per_instance ? "true" : "false");
  text += fmt::format("{:<30} {}\n", "popdist_env_set", topology.popdist_env_set ? "true" : "false");
  if (topology.warnings.empty()) {
    text += "warnings: none\n";
  } else {
    text += "warnings:\n";
    for (const auto& warning : topology.warnings) text += fmt::format("  - {}\n", warning);
  }
  return text;
}

std::ostream& operator<<(std::ostream& out, const Topology& topology) { return out << describe(topology); }

}  // namespace popdist
