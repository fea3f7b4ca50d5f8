#pragma once
// The reach probe's command line and exit statuses: what `popdist run` starts on a host whose
// agents never spoke (run/supervise/reach_probe.hpp), through the launcher's own remote shell,
// and what `popdist _reach` (tools/reach/) answers. Both processes agree on it, so it lives here:
//   <remote shell> <host> popdist _reach --address A --port P --within MS

namespace popdist::cli {

/// The hidden subcommand's name.
inline constexpr const char* kReachCommand = "_reach";
/// `popdist _reach`'s status when it connected back to popdist run.
inline constexpr int kReachConnected = 0;
/// `popdist _reach`'s status when it started but could not connect back within its time; any
/// other status is the remote shell's (ssh's 255) or the remote host's shell's (127: no popdist).
inline constexpr int kReachNoConnection = 4;

}  // namespace popdist::cli
