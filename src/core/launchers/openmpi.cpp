// Open MPI's mpirun/mpiexec (ORTE and PRRTE): OMPI_COMM_WORLD_*.

#include "core/launchers/plain_family.hpp"

namespace popdist::detail {

LauncherFamily openmpi_family() {
  // No node index: OMPI_COMM_WORLD_NODE_RANK is the rank among the node's processes.
  return plain_family({Launcher::OpenMpi, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                       "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"});
}

}  // namespace popdist::detail
