#pragma once
// Which launcher `popdist run` drives (docs/guide/launchers.md): Open MPI's mpirun, hydra's mpiexec
// (MPICH, Intel MPI) or Slurm's srun. The implementation is read from the launcher's own
// `--version` text, never from its name: Debian's `mpirun` may be Open MPI's or MPICH's, Intel
// MPI's `mpirun` is hydra, and hydra's text does not say "MPICH". Pure.

#include <optional>
#include <string>
#include <string_view>

namespace popdist::cli {

/// A launcher popdist run knows how to drive (one translation table each).
enum class Backend { openmpi, hydra, srun };

/// The user's --backend: one of the above, or `auto` (the first launcher found on PATH).
enum class BackendChoice { automatic, openmpi, hydra, srun };

/// "openmpi", "hydra", "srun": the names of --backend.
[[nodiscard]] std::string_view backend_name(Backend backend);

/// The --backend word ("auto", "openmpi", "hydra", "srun"); nullopt for any other.
[[nodiscard]] std::optional<BackendChoice> parse_backend_choice(std::string_view word);

/// What a launcher's --version says it is.
struct LauncherIdentity {
  Backend backend = Backend::openmpi;
  std::string description;  ///< "Open MPI 4.1.4", "MPICH hydra 4.0.2", "Intel MPI 2021.19", "Slurm 22.05.8"
};

/// The launcher that printed `version_text` (its --version output, stdout and stderr together);
/// nullopt when the text is none of theirs.
[[nodiscard]] std::optional<LauncherIdentity> identify_launcher(std::string_view version_text);

/// The first line of a --version text that has any text, trimmed to at most 100 characters (to
/// name what was found when it is no known launcher); "(no output)" when none.
[[nodiscard]] std::string first_line_of(std::string_view text);

}  // namespace popdist::cli
