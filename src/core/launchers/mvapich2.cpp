// MVAPICH2's mpirun_rsh and mpiexec: MV2_COMM_WORLD_*.

#include "core/launchers/plain_family.hpp"

namespace popdist::detail {

LauncherFamily mvapich2_family() {
  return plain_family({Launcher::Mvapich2, "MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE", "MV2_COMM_WORLD_LOCAL_RANK",
                       "MV2_COMM_WORLD_LOCAL_SIZE"});
}

}  // namespace popdist::detail
