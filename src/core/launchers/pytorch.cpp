// The PyTorch environment (torch.distributed.launch, Kubeflow, DeepSpeed, Accelerate): RANK and
// WORLD_SIZE without torchrun's marker, a local rank maybe without its count, and the node under
// each launcher's name for it.

#include "core/launchers/reading.hpp"

namespace popdist::detail {
namespace {

// Both RANK and WORLD_SIZE: one alone is what a training script or Lightning's launcher writes
// into its own environment (Lightning sets WORLD_SIZE, LOCAL_RANK, NODE_RANK but no RANK), which
// is no launch and is reported as unused variables instead.
std::optional<std::string> present(const EnvLookup& env) {
  if (env("RANK") && env("WORLD_SIZE")) return std::string("WORLD_SIZE");
  return std::nullopt;
}

Identity read(const EnvLookup& env) {
  Identity identity;
  identity.launcher = Launcher::PyTorch;
  identity.detected_by = present(env).value_or(kForced);
  read_rank_and_size(identity, env, "RANK", "WORLD_SIZE");
  // DeepSpeed's launcher names the local count LOCAL_SIZE and the node CROSS_RANK/CROSS_SIZE;
  // Lightning and Accelerate name the node NODE_RANK.
  read_local_rank_maybe_alone(identity, env, "LOCAL_RANK", {"LOCAL_WORLD_SIZE", "LOCAL_SIZE"});
  identity.node = read_node(identity.launcher, env, {"GROUP_RANK", "NODE_RANK", "CROSS_RANK"},
                            {"GROUP_WORLD_SIZE", "CROSS_SIZE"});
  return validated(std::move(identity));
}

}  // namespace

LauncherFamily pytorch_family() {
  LauncherFamily family;
  family.markers = {"RANK with WORLD_SIZE"};
  family.present = present;
  family.read = read;
  family.stated = {{"RANK", true},       {"WORLD_SIZE"},       {"LOCAL_RANK", true}, {"LOCAL_WORLD_SIZE"},
                   {"LOCAL_SIZE"},       {"GROUP_RANK", true}, {"GROUP_WORLD_SIZE"}, {"NODE_RANK", true},
                   {"CROSS_RANK", true}, {"CROSS_SIZE"}};
  family.needs = "the PyTorch environment needs both RANK and WORLD_SIZE (torchrun also sets TORCHELASTIC_RUN_ID)";
  return family;
}

}  // namespace popdist::detail
