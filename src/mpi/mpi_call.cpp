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
  const bool initialized = mpi_was_initialized();
  int finalized = 0;
  MPI_Finalized(&finalized);
  return initialized && finalized == 0;
}

bool mpi_was_initialized() noexcept {
  int initialized = 0;
  MPI_Initialized(&initialized);
  return initialized != 0;
}

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  check_mpi(MPI_Get_library_version(text, &length), "MPI_Get_library_version");
  return std::string(text, static_cast<std::size_t>(length));
}

}  // namespace popdist::detail
