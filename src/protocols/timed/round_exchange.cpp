#include "protocols/timed/round_exchange.hpp"

#include <memory>

#include "mpi/mpi_call.hpp"

namespace popdist::detail {

RoundExchange::RoundExchange(TimedRounds& rounds, MPI_Comm comm, int tag)
    : rounds_(rounds), comm_(comm), tag_(tag), remaining_(rounds.receives) {
  if (rounds_.outgoing.use_count() > 1) rounds_.outgoing = std::make_shared<std::vector<Round>>(rounds_.steps);
  for (std::size_t step = 0; step < rounds_.steps; ++step) {
    rounds_.received[step] = rounds_.receive_from[step] == kNoPartner;
  }
}

void RoundExchange::listen() {
  for (std::size_t step = 0; step < rounds_.steps; ++step) {
    if (rounds_.receive_from[step] != kNoPartner) post_receive(step);
  }
}

void RoundExchange::post_receive(std::size_t step) {
  MpiLock lock;
  check_mpi(MPI_Irecv(&rounds_.incoming[step], sizeof(Round), MPI_BYTE, rounds_.receive_from[step], tag_, comm_,
                      &rounds_.requests[step]),
            "MPI_Irecv");
}

void RoundExchange::send_ready(const Round& payload) {
  auto& outgoing = *rounds_.outgoing;
  while (next_send_ < rounds_.steps && (next_send_ == 0 || rounds_.received[next_send_ - 1] != 0)) {
    if (rounds_.send_to[next_send_] != kNoPartner) {  // else a step that only receives
      outgoing[next_send_] = payload;
      MpiLock lock;
      check_mpi(MPI_Isend(&outgoing[next_send_], sizeof(Round), MPI_BYTE, rounds_.send_to[next_send_], tag_, comm_,
                          &rounds_.requests[rounds_.send_index(next_send_)]),
                "MPI_Isend");
    }
    ++next_send_;
  }
}

bool RoundExchange::completed(std::size_t step) {
  int flag = 0;
  MpiLock lock;
  check_mpi(MPI_Test(&rounds_.requests[step], &flag, MPI_STATUS_IGNORE), "MPI_Test");
  return flag != 0;
}

}  // namespace popdist::detail
