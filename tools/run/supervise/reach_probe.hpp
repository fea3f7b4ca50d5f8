#pragma once
// Why a host's agents never spoke: popdist run starts `popdist _reach` (tools/reach/) on it
// through the launcher's own remote shell -- Open MPI's plm_rsh_agent, hydra's -launcher-exec,
// else ssh -- all hosts at once and each within a deadline of a few seconds, and reads what came
// back: it connected back to the channel (the host is reachable: the launcher failed there for
// another reason), it started but could not connect back (a firewall, the wrong interface), the
// remote shell failed (its status and last line), or no answer in time. Only after a failure --
// the launcher ended without word from some hosts, or hosts stayed silent at the start
// (startup_watch.hpp) -- so a job that starts normally pays nothing. srun has no remote shell to
// borrow: under it nothing is probed.

#include <chrono>
#include <string>
#include <vector>

#include "popdist/environment.hpp"
#include "run/launch/launcher_backend.hpp"

namespace popdist::cli {

/// What the probe of one host found.
enum class ProbeOutcome {
  connected,      ///< `popdist _reach` connected back
  no_connection,  ///< it started, but could not connect back within its time
  shell_failed,   ///< the remote shell (or the host's shell) ended without running it
  no_answer,      ///< nothing ended within the deadline (killed then)
};

struct ProbeResult {
  std::string host;
  ProbeOutcome outcome = ProbeOutcome::no_answer;
  int status = 0;         ///< as a shell reports it
  std::string last_line;  ///< of what it wrote (stdout and stderr), trimmed
};

/// The remote shell of `backend` (`-launcher-exec`/`plm_rsh_agent` in the launcher's words
/// `global_words`, else in `env` (OMPI_MCA_plm_rsh_agent, HYDRA_LAUNCHER_EXEC), else "ssh"),
/// as words; its first alternative for Open MPI's "ssh : rsh". Empty under srun. Pure.
[[nodiscard]] std::vector<std::string> remote_shell(Backend backend, const std::vector<std::string>& global_words,
                                                    const EnvLookup& env);

/// What to run for `host`: `shell host popdist _reach --address --port --within` (`self`, the
/// agent's path, the same on every host). Pure.
[[nodiscard]] std::vector<std::string> probe_command(const std::vector<std::string>& shell, const std::string& host,
                                                     const std::string& self, const std::string& address, int port,
                                                     std::chrono::milliseconds within);

/// The outcome of a probe that ended with `status` (as a shell reports it), or not (`timed_out`). Pure.
[[nodiscard]] ProbeOutcome classify_probe(int status, bool timed_out);

/// True when `host` names this machine (its host name, short or full, or localhost).
[[nodiscard]] bool is_this_machine(const std::string& host);

/// Runs `commands` (one per host of `hosts`) at once; whatever is still running at `deadline` is
/// killed (its process group) and is no_answer. Never waits longer.
[[nodiscard]] std::vector<ProbeResult> run_probes(const std::vector<std::string>& hosts,
                                                  const std::vector<std::vector<std::string>>& commands,
                                                  std::chrono::steady_clock::time_point deadline);

}  // namespace popdist::cli
