#include "mpi/matched_receive.hpp"

#include "mpi/mpi_call.hpp"

namespace popdist::detail {

bool take_message(int tag, MPI_Comm comm, std::vector<char>& buffer, MPI_Status& status) {
  int flag = 0;
  int count = 0;
  MpiLock lock;
#if defined(POPDIST_SIMULATED_MPI)
  // SMPI: no matched probe (see the header). One thread per simulated rank: probe, then receive
  // exactly the probed message (same source, same tag; MPI keeps pairs of processes in order).
  check_mpi(MPI_Iprobe(MPI_ANY_SOURCE, tag, comm, &flag, &status), "MPI_Iprobe");
  if (flag == 0) return false;
  check_mpi(MPI_Get_count(&status, MPI_BYTE, &count), "MPI_Get_count");
  buffer.resize(static_cast<std::size_t>(count));
  check_mpi(MPI_Recv(buffer.data(), count, MPI_BYTE, status.MPI_SOURCE, tag, comm, MPI_STATUS_IGNORE), "MPI_Recv");
#else
  MPI_Message matched = MPI_MESSAGE_NULL;
  check_mpi(MPI_Improbe(MPI_ANY_SOURCE, tag, comm, &flag, &matched, &status), "MPI_Improbe");
  if (flag == 0) return false;
  check_mpi(MPI_Get_count(&status, MPI_BYTE, &count), "MPI_Get_count");
  buffer.resize(static_cast<std::size_t>(count));
  check_mpi(MPI_Mrecv(buffer.data(), count, MPI_BYTE, &matched, MPI_STATUS_IGNORE), "MPI_Mrecv");
#endif
  return true;
}

}  // namespace popdist::detail
