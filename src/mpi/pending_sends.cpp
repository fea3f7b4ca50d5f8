#include "mpi/pending_sends.hpp"

#include "mpi/mpi_call.hpp"

namespace popdist::detail {

void PendingSends::send(std::vector<char> bytes, int destination, int tag, MPI_Comm comm) {
  std::lock_guard<std::mutex> guard(mutex_);
  auto buffer = std::make_shared<const std::vector<char>>(std::move(bytes));
  MPI_Request request = MPI_REQUEST_NULL;
  {
    MpiLock lock;
    check_mpi(MPI_Isend(buffer->data(), static_cast<int>(buffer->size()), MPI_BYTE, destination, tag, comm, &request),
              "MPI_Isend");
  }
  requests_.push_back(request);
  buffers_.push_back(std::move(buffer));
}

void PendingSends::adopt(MPI_Request request, std::shared_ptr<const void> buffer) {
  if (request == MPI_REQUEST_NULL) return;
  std::lock_guard<std::mutex> guard(mutex_);
  requests_.push_back(request);
  buffers_.push_back(std::move(buffer));
}

void PendingSends::reap() {
  std::lock_guard<std::mutex> guard(mutex_);
  if (requests_.empty()) return;
  std::vector<int> done(requests_.size());
  int count = 0;
  {
    MpiLock lock;
    check_mpi(MPI_Testsome(static_cast<int>(requests_.size()), requests_.data(), &count, done.data(),
                           MPI_STATUSES_IGNORE),
              "MPI_Testsome");
  }
  // Completed requests are now MPI_REQUEST_NULL: drop them with their buffers.
  std::size_t kept = 0;
  for (std::size_t i = 0; i < requests_.size(); ++i) {
    if (requests_[i] != MPI_REQUEST_NULL) {
      requests_[kept] = requests_[i];
      buffers_[kept] = std::move(buffers_[i]);
      ++kept;
    }
  }
  requests_.resize(kept);
  buffers_.resize(kept);
}

void PendingSends::release_all() noexcept {
  std::lock_guard<std::mutex> guard(mutex_);
  if (mpi_is_usable()) {
    MpiLock lock;
    for (auto& request : requests_) {
      if (request != MPI_REQUEST_NULL) MPI_Request_free(&request);
    }
  }
  requests_.clear();
  for (auto& buffer : buffers_) released_.push_back(std::move(buffer));
  buffers_.clear();
}

PendingSends& pending_sends() {
  // Never destroyed: released buffers must outlive MPI_Finalize, which may run from atexit. Here
  // and not in the process state because this layer's sends use it and cannot see that state.
  static auto* const the_sends = new PendingSends();
  return *the_sends;
}

}  // namespace popdist::detail
