#pragma once
// The srun backend's step, found and signalled through Slurm: srun itself turns a SIGTERM into
// SIGKILL of every task, so popdist run delivers a SIGTERM to the instances with `scancel
// --signal=TERM <job>.<step>`, the step found by the name popdist run gave it (srun --job-name,
// srun_command.hpp) with `squeue --steps --name NAME --user UID`. Every question to Slurm is bounded in time; when
// one fails, the caller falls back to srun's own SIGINT (and says so under -v).

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace popdist::cli {

/// A Slurm command next to `launcher` (srun's path: squeue, scancel, sinfo of the same Slurm),
/// else the bare name (looked up on PATH).
[[nodiscard]] std::string slurm_command_path(const std::string& launcher, const std::string& command);

/// The step id ("<job>.<step>") from squeue's answer (one id a line) when it names exactly one
/// step; nullopt otherwise, with `why` set.
[[nodiscard]] std::optional<std::string> single_step_id(const std::string& squeue_output, std::string& why);

/// Finds the step named `step_name` (squeue) and sends it `signal` (scancel), within `limit` in
/// all. Returns an empty string when done, else what failed ("squeue names no step popdist-run-ab12cd").
[[nodiscard]] std::string signal_named_step(const std::string& launcher, const std::string& step_name, int signal,
                                            std::chrono::milliseconds limit);

/// What sinfo says of `nodes` (`sinfo -h -N -n a,b -o %N|%T|%E`, report/slurm_nodes.hpp reads
/// it), within `limit`; empty, with `problem` set, when it could not say.
[[nodiscard]] std::string node_states(const std::string& launcher, const std::vector<std::string>& nodes,
                                      std::chrono::milliseconds limit, std::string& problem);

/// LauncherSignals::deliver_term of an srun job (process_runner.hpp): signal_named_step, and under
/// `verbose` a line saying what was done, or what failed and that srun's SIGINT is sent instead.
[[nodiscard]] std::function<bool(int)> step_stop(std::string launcher, std::string step_name, bool verbose);

}  // namespace popdist::cli
