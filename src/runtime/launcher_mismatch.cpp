#include "runtime/launcher_mismatch.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <initializer_list>
#include <optional>
#include <vector>

namespace popdist::detail {
namespace {

// The MPIs whose launchers start each other's processes: MPICH's relatives (Intel MPI, MVAPICH2,
// Cray MPICH) all read hydra's PMI_* variables.
enum class MpiFamily { kOpenMpi, kMpich, kUnknown };

MpiFamily family_of_library(std::string_view line) {
  if (line.find("Open MPI") != std::string_view::npos) return MpiFamily::kOpenMpi;
  for (const std::string_view name : {"MPICH", "MVAPICH", "Intel(R) MPI"})
    if (line.find(name) != std::string_view::npos) return MpiFamily::kMpich;
  return MpiFamily::kUnknown;
}

struct SeenLauncher {
  MpiFamily family = MpiFamily::kUnknown;
  std::string name;
  std::string variables;  // "PMI_RANK=1, PMI_SIZE=2": those that are set
  bool srun = false;      // whose processes any MPI may join, through the right PMI plugin
};

std::string set_variables(const EnvLookup& env, std::initializer_list<const char*> names) {
  std::vector<std::string> set;
  for (const char* name : names)
    if (const auto value = env(name)) set.push_back(fmt::format("{}={}", name, *value));
  return fmt::format("{}", fmt::join(set, ", "));
}

std::optional<SeenLauncher> launcher_in(const EnvLookup& env) {
  if (auto seen = set_variables(env, {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"}); !seen.empty())
    return SeenLauncher{MpiFamily::kOpenMpi, "Open MPI's mpirun", std::move(seen)};
  if (auto seen = set_variables(env, {"PMI_RANK", "PMI_SIZE"}); !seen.empty())
    return SeenLauncher{MpiFamily::kMpich, "MPICH's hydra or Intel MPI", std::move(seen)};
  if (auto seen = set_variables(env, {"SLURM_PROCID", "SLURM_NTASKS"}); !seen.empty() && env("SLURM_STEP_ID"))
    return SeenLauncher{MpiFamily::kUnknown, "Slurm's srun", std::move(seen), true};
  return std::nullopt;
}

std::string own_launcher(MpiFamily library) {
  switch (library) {
    case MpiFamily::kOpenMpi: return "Open MPI's mpirun (or popdist run)";
    case MpiFamily::kMpich: return "its mpiexec (hydra)";
    case MpiFamily::kUnknown: break;
  }
  return "that MPI's own launcher";
}

// srun starts any MPI's processes, through the PMI plugin named by --mpi.
std::string srun_hint(MpiFamily library, const std::string& library_line, const SeenLauncher& srun) {
  const char* plugin = library == MpiFamily::kOpenMpi ? "--mpi=pmix"
                       : library == MpiFamily::kMpich ? "--mpi=pmi2 (or pmix, when MPICH was built with it)"
                                                      : "--mpi=<the PMI it speaks> (srun --mpi=list)";
  return fmt::format("popdist is built against {} (MPI_Get_library_version), and Slurm's srun started this process "
                     "({}) without a PMI that this MPI joins, so each process is a job of one: pass srun {}",
                     library_line, srun.variables, plugin);
}

}  // namespace

std::string library_version_line(std::string_view library_version) {
  // Open MPI counts the terminating NUL in the length it reports.
  const auto line = library_version.substr(0, library_version.find_first_of(std::string_view("\n\0", 2)));
  std::string squeezed;
  for (const char c : line) {
    const bool space = c == ' ' || c == '\t' || c == '\r';
    if (space && (squeezed.empty() || squeezed.back() == ' ')) continue;
    squeezed.push_back(space ? ' ' : c);
  }
  while (!squeezed.empty() && squeezed.back() == ' ') squeezed.pop_back();
  return squeezed;
}

std::string launcher_mismatch_hint(std::string_view library_version, const EnvLookup& env) {
  const auto seen = launcher_in(env);
  if (!seen) return "";
  const std::string line = library_version_line(library_version);
  const MpiFamily library = family_of_library(line);
  if (seen->srun) return srun_hint(library, line, *seen);
  if (library == seen->family) return "";
  const std::string what_to_do = fmt::format(
      "Build popdist against the MPI whose launcher you use (that MPI's mpicxx first on PATH, or MPI_HOME, when "
      "CMake or pip builds it), or launch with the MPI popdist was built against: {}",
      own_launcher(library));
  if (library == MpiFamily::kUnknown) {
    return fmt::format("popdist is built against {} (MPI_Get_library_version), and {} started this process ({}): "
                       "when that launcher is another MPI's, each process is a job of one. {}",
                       line, seen->name, seen->variables, what_to_do);
  }
  return fmt::format("popdist is built against {} (MPI_Get_library_version), and {} started this process ({}): a "
                     "launcher of another MPI, so each process is a job of one. {}",
                     line, seen->name, seen->variables, what_to_do);
}

}  // namespace popdist::detail
