#pragma once
// The prepared job: what every attempt of a `popdist run` job shares, checked once before anything
// starts -- the options with PopRun's effects, the hosts and the plan, this machine's facts for the
// mpirun command, torchrun's master endpoint, the channel's address, and what was decided on the
// way (-v) or is wrong with the line (the notices: every problem in one run, as far as the stages
// before each allow). And what each attempt adds to it: its job directory, logs, port, variables.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "job/launch_plan.hpp"
#include "popdist/environment.hpp"
#include "run/launch/mpirun_command.hpp"
#include "run/options/notices.hpp"
#include "run/options/run_options.hpp"
#include "run/plan/channel_address.hpp"
#include "run/plan/host_source.hpp"

namespace popdist::cli {

/// What every attempt of a job shares.
struct PreparedJob {
  RunOptions options;              ///< the parsed line, with PopRun's mpirun arguments
  LaunchPlan plan;
  MpirunContext context;           ///< without the attempt's job directory, logs and port
  std::vector<std::string> decisions;
  std::vector<Notice> notices;
  std::optional<HostSelection> selection;
  std::optional<std::string> hooked_python_path;  ///< PYTHONPATH with the Python start-up hook
  bool fixed_port = false;         ///< --master-port or MASTER_PORT: every attempt uses it
  ChannelAddress channel_address;  ///< where every host's agents reach popdist run
};

/// Checks the line `parsed` in `env` and builds what every attempt shares; errors are notices
/// (the job cannot start when has_errors(job.notices)).
[[nodiscard]] PreparedJob prepare_job(const RunOptions& parsed, const EnvLookup& env);

/// The variables attempt `attempt` (from 0) exports to every instance besides the plan's: the
/// attempt's number (POPDIST_RESTART_COUNT, TORCHELASTIC_RESTART_COUNT), --max-restarts
/// (TORCHELASTIC_MAX_RESTARTS), a torchrun run id with a master endpoint, and the job directory.
[[nodiscard]] std::vector<std::pair<std::string, std::string>> attempt_exports(const RunOptions& options, int attempt,
                                                                               const MpirunContext& context);

/// The context of attempt `attempt`: its job directory `job_dir`, log folder (--log-dir
/// DIR/attempt_K), a fresh master port after the first (unless fixed) and attempt_exports().
[[nodiscard]] MpirunContext attempt_context(const PreparedJob& job, int attempt, const std::string& job_dir);

}  // namespace popdist::cli
