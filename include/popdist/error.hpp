#pragma once
/// @file error.hpp
/// One exception hierarchy for the whole library: everything thrown derives from popdist::Error.

#include <stdexcept>
#include <string>
#include <vector>

namespace popdist {

/// Base of every exception popdist throws.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A launcher or POPDIST_* variable is malformed or contradicts another (thrown by detect()).
/// The message names the variable, its value and what was expected.
class EnvironmentError : public Error {
 public:
  using Error::Error;
};

/// The instances disagree about the job, or the topology disagrees with MPI (thrown by init()).
/// The message names the instances and the values that disagree.
class TopologyError : public Error {
 public:
  using Error::Error;
};

/// A call was made with bad arguments or in the wrong state: an unknown communicator id, an id
/// reused for another set, an out-of-range participant, a collective before init(), ...
class UsageError : public Error {
 public:
  using Error::Error;
};

/// An MPI call failed; carries the MPI function, the error code and MPI_Error_string's text.
class MpiError : public Error {
 public:
  MpiError(std::string function, int code, std::string mpi_message);
  [[nodiscard]] const std::string& function() const noexcept { return function_; }
  [[nodiscard]] int code() const noexcept { return code_; }
  [[nodiscard]] const std::string& mpi_message() const noexcept { return mpi_message_; }

 private:
  std::string function_;
  int code_;
  std::string mpi_message_;
};

/// A timed synchronize() gave up; names the instances that did not arrive.
class TimeoutError : public Error {
 public:
  TimeoutError(const std::string& message, std::vector<int> missing_instances);
  [[nodiscard]] const std::vector<int>& missing_instances() const noexcept { return missing_; }

 private:
  std::vector<int> missing_;
};

/// The function given to execute_on_instances() failed on another member.
class RemoteExecutionError : public Error {
 public:
  RemoteExecutionError(int failed_instance, std::string exception_type, std::string exception_message);
  [[nodiscard]] int failed_instance() const noexcept { return failed_instance_; }
  [[nodiscard]] const std::string& exception_type() const noexcept { return exception_type_; }
  [[nodiscard]] const std::string& exception_message() const noexcept { return exception_message_; }

 private:
  int failed_instance_;
  std::string exception_type_;
  std::string exception_message_;
};

}  // namespace popdist
