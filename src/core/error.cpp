#include "popdist/error.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <utility>

namespace popdist {

MpiError::MpiError(std::string function, int code, std::string mpi_message)
    : Error(fmt::format("{} failed with MPI error code {}: {}", function, code, mpi_message)),
      function_(std::move(function)),
      code_(code),
      mpi_message_(std::move(mpi_message)) {}

TimeoutError::TimeoutError(const std::string& message, std::vector<int> missing_instances)
    : Error(message), missing_(std::move(missing_instances)) {}

RemoteExecutionError::RemoteExecutionError(int failed_instance, std::string exception_type,
                                           std::string exception_message)
    : Error(fmt::format("execute_on_instances: the function failed on instance {} with {}: {}", failed_instance,
                        exception_type, exception_message)),
      failed_instance_(failed_instance),
      exception_type_(std::move(exception_type)),
      exception_message_(std::move(exception_message)) {}

}  // namespace popdist
