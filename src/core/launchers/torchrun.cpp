// torchrun (torch.distributed.run, TorchElastic): RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
// GROUP_RANK, marked by TORCHELASTIC_RUN_ID.

#include <string_view>

#include "core/launchers/reading.hpp"

namespace popdist::detail {
namespace {

// `popdist run` sets TORCHELASTIC_RUN_ID=popdist-run-<port> for Lightning's sake; its instances
// are Open MPI's. A torchrun that an instance starts gives its workers a run id of its own.
constexpr std::string_view kPopdistRunId = "popdist-run-";

std::optional<std::string> present(const EnvLookup& env) {
  const auto run_id = env("TORCHELASTIC_RUN_ID");
  if (run_id && run_id->rfind(kPopdistRunId, 0) == 0) return std::nullopt;
  return first_set(env, {"TORCHELASTIC_RUN_ID"});
}

Identity read(const EnvLookup& env) {
  Identity identity;
  identity.launcher = Launcher::Torchrun;
  identity.detected_by = present(env).value_or(kForced);
  read_rank_and_size(identity, env, "RANK", "WORLD_SIZE");
  read_local(identity, env, "LOCAL_RANK", "LOCAL_WORLD_SIZE");
  // GROUP_RANK is the documented host index; GROUP_WORLD_SIZE only checks it when present.
  identity.node = read_node(identity.launcher, env, {"GROUP_RANK"}, {"GROUP_WORLD_SIZE"});
  return validated(std::move(identity));
}

}  // namespace

LauncherFamily torchrun_family() {
  LauncherFamily family;
  family.markers = {"TORCHELASTIC_RUN_ID"};
  family.present = present;
  family.read = read;
  family.stated = {{"RANK", true},      {"WORLD_SIZE"}, {"LOCAL_RANK", true}, {"LOCAL_WORLD_SIZE"},
                   {"GROUP_RANK", true}, {"GROUP_WORLD_SIZE"}};
  family.needs = "torchrun sets TORCHELASTIC_RUN_ID";
  // torchrun's RANK/WORLD_SIZE are the PyTorch environment's too: not a second launch.
  family.sets_variables_of = {Launcher::PyTorch};
  return family;
}

}  // namespace popdist::detail
