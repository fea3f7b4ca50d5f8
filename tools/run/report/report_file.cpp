#include "run/report/report_file.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "topology/json_writer.hpp"

namespace popdist::cli {
namespace {

void write_lost_host(topology_cmd::JsonWriter& json, const LostHost& host) {
  json.begin_object();
  json.key("host").value(host.host);
  json.key("instances").begin_array();
  for (const int instance : host.instances) json.value(instance);
  json.end_array();
  json.key("last_heard_ms").value(static_cast<std::int64_t>(host.silent.count()));
  json.end_object();
}

void write_failure(topology_cmd::JsonWriter& json, const Failure& failure, const Failure& first, long long start_ns) {
  json.begin_object();
  json.key("instance").value(failure.end.index);
  json.key("host").value(failure.end.host);
  json.key("status").value(failure.end.status);
  json.key("status_text").value(describe_status(failure.end.status));
  json.key("after_ms").value(static_cast<std::int64_t>((failure.end.ended_ns - start_ns) / 1000000));
  json.key("stopped_by_teardown").value(&failure != &first && stopped_by_teardown(failure, first));
  json.key("error_source").value(failure.error_source);
  json.key("error_lines").value(failure.error_lines);
  json.end_object();
}

}  // namespace

std::string report_json(const AttemptOutcome& outcome, const std::vector<Failure>& failures) {
  std::ostringstream text;
  topology_cmd::JsonWriter json(text);
  json.begin_object();
  json.key("status").value(outcome.status);
  json.key("status_text").value(describe_status(outcome.status));
  json.key("attempt").value(outcome.attempt);
  json.key("attempts").value(outcome.attempts);
  json.key("stopped").value(outcome.stopped);
  // The block popdist run prints, whole, so that a caller shows it without laying it out again.
  json.key("text").value(outcome.status == 0 ? std::string() : failure_report(failures, outcome.start_ns,
                                                                               outcome.attempt, outcome.attempts,
                                                                               outcome.status, outcome.lost,
                                                                               outcome.unreported, outcome.unreached));
  json.key("failures").begin_array();
  for (const auto& failure : failures) write_failure(json, failure, failures.front(), outcome.start_ns);
  json.end_array();
  json.key("lost_hosts").begin_array();
  for (const auto& host : outcome.lost) write_lost_host(json, host);
  json.end_array();
  json.key("unreported").begin_array();
  for (const auto& instance : outcome.unreported) {
    json.begin_object();
    json.key("instance").value(instance.index);
    json.key("host").value(instance.host);
    json.key("in_teardown").value(instance.in_teardown);
    json.end_object();
  }
  json.end_array();
  json.end_object();
  text << "\n";
  return text.str();
}

void write_report_file(const std::string& path, const AttemptOutcome& outcome, const std::vector<Failure>& failures) {
  const std::string partial = path + ".partial";
  {
    std::ofstream out(partial, std::ios::trunc);
    out << report_json(outcome, failures);
    if (out.flush()) {
      out.close();
      if (std::rename(partial.c_str(), path.c_str()) == 0) return;
    }
  }
  std::remove(partial.c_str());
  fmt::print(stderr, "popdist run: cannot write the report file {}\n", path);
}

}  // namespace popdist::cli
