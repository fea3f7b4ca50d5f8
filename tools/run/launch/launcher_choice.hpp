#pragma once
// Finding the launcher popdist run drives, before anything starts: the candidates of --backend on
// PATH, each asked for its `--version` (launcher_backend.hpp); the first that is the backend asked
// for wins. When none is, a refusal that names what was found and what to do.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "popdist/environment.hpp"
#include "run/launch/launcher_backend.hpp"

namespace popdist::cli {

/// The launcher of a job.
struct Launcher {
  Backend backend = Backend::openmpi;
  std::string path;         ///< where it was found on PATH (what is executed)
  std::string name;         ///< its bare name (argv[0]: Open MPI reads an absolute argv[0] as --prefix)
  std::string description;  ///< what its --version says it is: "Open MPI 4.1.4"
};

/// A launcher, or why there is none (the whole message).
struct LauncherSearch {
  std::optional<Launcher> launcher;
  std::string refusal;
  /// With a launcher: what was found before it and passed over (an `mpirun` popdist does not know
  /// before the srun of auto), for a notice; empty when the first one found was taken.
  std::vector<std::string> passed_over;
};

/// The program names tried for a choice, in order ("auto": mpirun, then mpiexec).
[[nodiscard]] std::vector<std::string> launcher_candidates(BackendChoice choice);

/// `path --version`'s output (stdout and stderr), run with argv[0] = `name` and stdin from
/// /dev/null; nullopt when it could not start or did not end within `deadline` (it is then killed).
[[nodiscard]] std::optional<std::string> version_output(const std::string& path, const std::string& name,
                                                        std::chrono::milliseconds deadline);

/// The launcher for `choice` on env's PATH.
[[nodiscard]] LauncherSearch find_launcher(BackendChoice choice, const EnvLookup& env);

}  // namespace popdist::cli
