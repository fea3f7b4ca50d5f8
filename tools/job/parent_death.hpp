#pragma once
// Ending a process with its parent: Linux sends it a signal when the parent goes
// (PR_SET_PDEATHSIG), so that nothing runs on after its launcher was killed outright (SIGKILL from
// the OOM killer, a scheduler, a Jupyter kernel's restart), when nobody is left to forward a stop.

#include <sys/types.h>

namespace popdist::cli {

/// Asks for `signal` when the parent goes. False when `parent` is no longer the parent: it died
/// before the request took effect, so no signal will come and the caller must end by itself.
[[nodiscard]] bool end_with_parent(int signal, pid_t parent) noexcept;

}  // namespace popdist::cli
