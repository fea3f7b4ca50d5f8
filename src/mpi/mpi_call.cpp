#include "mpi/mpi_call.hpp"

#include <string>

#include "popdist/error.hpp"

namespace popdist::detail {
namespace {

// A function-local static, not in the process state: the layers above take it through MpiLock,
// and this layer cannot see the process state above it.
std::mutex& mpi_mutex() {
  static std::mutex the_mutex;
  return the_mutex;
}

}  // namespace

void throw_mpi_error(const char* function, int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  // MPI_Error_string is callable even after an error; if it fails too we still name the code.
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) {
    length = 0;
  }
  throw MpiError(function, code, length > 0 ? std::string(text, static_cast<std::size_t>(length)) : "(no text)");
}

void MpiLock::lock() {
  mpi_mutex().lock();
  locked_ = true;
}

void MpiLock::unlock() { mpi_mutex().unlock(); }

bool mpi_is_usable() noexcept {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized != 0 && finalized == 0;
}

}  // namespace popdist::detail
