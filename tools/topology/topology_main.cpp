#include "topology/topology_main.hpp"

#include <exception>
#include <iostream>

#include "popdist/environment.hpp"
#include "popdist/error.hpp"
#include "popdist/job_check.hpp"
#include "popdist/runtime.hpp"
#include "popdist/topology.hpp"
#include "topology/job_summary.hpp"
#include "topology/topology_json.hpp"
#include "topology/topology_report.hpp"

namespace popdist::cli::topology_cmd {
namespace {

/// The environment to interpret: the file's variables only, or the live process environment.
EnvLookup chosen_environment(const TopologyOptions& options, std::istream& in) {
  if (options.env_file.empty()) return process_environment();
  if (options.env_file == "-") return lookup_in(parse_env_file(in, "<standard input>"));
  return lookup_in(read_env_file(options.env_file));
}

int print_this_instance(const TopologyOptions& options, std::istream& in, std::ostream& out) {
  // detect() only: no MPI, so this stays a few milliseconds even on a login node.
  const Topology topology = detect(chosen_environment(options, in));
  out << (options.json ? topology_to_json(topology) + "\n" : instance_report(topology)) << std::flush;
  return exit_ok;
}

int print_job(const TopologyOptions& options, std::ostream& out, std::ostream& err) {
  // survey_job() detects before MPI_Init_thread (which adds variables of its own), gathers every
  // instance's view and runs the job check -- the same check init() runs -- returning its
  // findings instead of throwing them, so that the job can be shown even when it is broken.
  const JobSummary job = summarize_survey(survey_job());
  if (topology().instance_index == 0) {
    out << (options.json ? job_to_json(job) + "\n" : job_report(job)) << std::flush;
    if (job.has_errors) {
      err << "popdist topology: error: the job breaks the cross-instance rules (see the anomalies above); init() "
             "refuses it\n"
          << std::flush;
    }
  }
  // The other instances print nothing, and reach the same verdict from the same views.
  // finalize() ends MPI (it would also run at exit; explicit so that MPI is down before main returns).
  finalize();
  return job.has_errors ? exit_invalid_environment : exit_ok;
}

}  // namespace

int run_topology(const TopologyOptions& options, std::istream& in, std::ostream& out, std::ostream& err) {
  const auto fail = [&](int status, const std::string& message) {
    // One write: under mpirun several instances report at once, and separate writes of the
    // prefix and the message would interleave.
    std::string text = "popdist topology: error: " + message + "\n";
    if (status == exit_usage_error) text += "Run with --help for more information.\n";
    err << text << std::flush;
    return status;
  };
  try {
    if (options.all && !options.env_file.empty()) {
      // main.cpp's parser already rejects this (the options exclude each other); checked again
      // for callers that fill TopologyOptions themselves.
      return fail(exit_usage_error, "--all gathers the live instances of a job and cannot read --env-file");
    }
    return options.all ? print_job(options, out, err) : print_this_instance(options, in, out);
  } catch (const UsageError& e) {
    return fail(exit_usage_error, e.what());
  } catch (const EnvironmentError& e) {
    return fail(exit_invalid_environment, e.what());
  } catch (const TopologyError& e) {
    return fail(exit_invalid_environment, e.what());
  } catch (const std::exception& e) {
    return fail(exit_failure, e.what());
  }
}

}  // namespace popdist::cli::topology_cmd
