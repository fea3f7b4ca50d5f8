// `popdist run`'s line read as a whole: every PopRun option of the table in docs/guide/hosts.md through the
// parser with the warning line it prints, and every problem of a line reported in one run.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>

#include "run/options/notices.hpp"
#include "run/options/poprun_ipu_options.hpp"
#include "run/options/run_line.hpp"
#include "run/plan/job_variables.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using popdist::cli::Notice;
using popdist::cli::notice_lines;
using popdist::cli::parse_run_line;
using popdist::cli::PopRunAnswer;

namespace {

// A value PopRun takes for an option whose value has the form `form`.
std::string valid_value(std::string_view form) {
  if (form == "yes|no") return "yes";
  if (form == "N") return "2";
  if (form == "SECONDS") return "600";
  if (form == "PORT") return "8090";
  if (form == "CIDR") return "10.1.0.0/16";
  return "/tmp/x";
}

// What `popdist run` prints about the line (print_notices), captured.
std::string printed(const std::vector<Notice>& notices) {
  char* buffer = nullptr;
  std::size_t size = 0;
  std::FILE* out = open_memstream(&buffer, &size);
  popdist::cli::print_notices(out, notices);
  std::fclose(out);
  std::string text(buffer, size);
  std::free(buffer);
  return text;
}

}  // namespace

TEST_CASE("every PopRun option of the table has its answer", "[cli][poprun]") {
  for (const auto& option : popdist::cli::poprun_ipu_options()) {
    const std::string name(option.name);
    const std::string value = valid_value(option.value);
    for (const auto& words : {std::vector<std::string>{name, value, "python3", "train.py"},
                              std::vector<std::string>{name + "=" + value, "python3", "train.py"}}) {
      INFO(words.front());
      const auto line = parse_run_line(words);
      const auto& notices = line.options.notices;
      CHECK(line.options.program == std::vector<std::string>{"python3", "train.py"});
      const std::string text = printed(notices);
      switch (option.answer) {
        case PopRunAnswer::ignore:
          REQUIRE(notices.size() == 1);
          CHECK(notices[0].kind == Notice::Kind::ignored);
          CHECK(text == "popdist run: warning: ignored PopRun options (popdist starts no V-IPU client; the job runs on "
                        "whatever devices the hosts have): " +
                            name + " '" + value + "' (" + std::string(option.why) + ")\n");
          break;
        case PopRunAnswer::keep:
          CHECK(notices.empty());
          CHECK(text.empty());
          break;
        case PopRunAnswer::refuse:
          REQUIRE(notices.size() == 1);
          CHECK(notices[0].kind == Notice::Kind::error);
          CHECK_THAT(text, StartsWith("popdist run: error: " + name + ": '" + value + "': refused"));
          break;
      }
    }
  }
  // a bare boolean means yes; the kept options fill their fields
  CHECK_THAT(printed(parse_run_line({"--offline-mode", "--", "p"}).options.notices), Contains("--offline-mode 'yes'"));
  const auto kept = parse_run_line({"--executable-cache-path", "/c", "--num-ilds=2", "--host-subnet", "10.0.0.0/8", "p"});
  CHECK(kept.options.executable_cache_path == "/c");
  CHECK(kept.options.num_ilds == 2);
  CHECK(kept.options.host_subnet == "10.0.0.0/8");
}

TEST_CASE("ignored options share one warning line, where the first one was", "[cli][poprun]") {
  const auto line = parse_run_line({"--vipu-server-host=h", "--num-instances", "2", "--vipu-partition", "p",
                                    "--num-instance", "2", "--reset-partition", "no", "--sync-type",
                                    "ST_POD_NATIVE_DEFAULT", "python3", "x.py"});
  const auto lines = notice_lines(line.options.notices);
  REQUIRE(lines.size() == 2);
  CHECK_THAT(lines[0], StartsWith("warning: ignored PopRun options") && Contains("--vipu-server-host 'h'") &&
                           Contains("--vipu-partition 'p'") && Contains("--reset-partition 'no'") &&
                           Contains("--sync-type 'ST_POD_NATIVE_DEFAULT'"));
  CHECK(lines[0].find("--vipu-server-host") < lines[0].find("--sync-type"));
  CHECK(lines[1] == "error: '--num-instance' is not an option of popdist run (did you mean --num-instances?)");
  // the typo took its value with it: the program is still the program
  CHECK(line.options.program == std::vector<std::string>{"python3", "x.py"});
  CHECK(line.options.num_instances == 2);
}

TEST_CASE("every problem of a line, in command-line order", "[cli]") {
  const auto line = parse_run_line({"--num-instances", "0", "--vipu-partition=p", "--print-topology", "maybe",
                                    "--bogus", "--num-ilds", "x", "--ipus-per-replica=2", "--host-subnet", "eth0",
                                    "--", "prog"});
  const auto lines = notice_lines(line.options.notices);
  REQUIRE(lines.size() == 6);
  CHECK_THAT(lines[0], StartsWith("error: --num-instances: '0' is out of range"));
  CHECK_THAT(lines[1], StartsWith("warning: ignored PopRun options") && Contains("--vipu-partition 'p'"));
  CHECK_THAT(lines[2], StartsWith("error: --print-topology: 'maybe' is not a boolean"));
  CHECK(lines[3] == "error: '--bogus' is not an option of popdist run");
  CHECK_THAT(lines[4], StartsWith("error: --num-ilds: 'x' is not a whole number"));
  CHECK_THAT(lines[5], StartsWith("error: --host-subnet: 'eth0' is not a subnet"));
  // what parsed is kept, so that the later checks see it
  CHECK(line.options.ipus_per_replica == 2);
  CHECK(line.options.program == std::vector<std::string>{"prog"});
  CHECK(popdist::cli::has_errors(line.options.notices));
}

TEST_CASE("the line's words keep PopRun's reading", "[cli]") {
  // values that look like options are values of options that need one
  const auto line = parse_run_line({"--mpi-local-args", "-x A -x B", "--num-replicas", "-1", "--mpi-global-args",
                                    "--tag-output --allow-run-as-root", "-vv", "-Hh1,h2", "prog", "--num-ilds", "x"});
  const auto lines = notice_lines(line.options.notices);
  REQUIRE(lines.size() == 1);
  CHECK_THAT(lines[0], Contains("--num-replicas: '-1' is not a whole number"));
  CHECK(line.options.mpi_local_args == std::vector<std::string>{"-x A -x B"});
  CHECK(line.options.mpi_global_args == std::vector<std::string>{"--tag-output --allow-run-as-root"});
  CHECK(line.options.verbosity == 2);
  CHECK(line.options.host_lists == std::vector<std::string>{"h1,h2"});
  CHECK(line.options.program == std::vector<std::string>{"prog", "--num-ilds", "x"});
  // a missing value, then the next option is still read
  const auto missing = notice_lines(parse_run_line({"--host", "--num-instances", "x", "p"}).options.notices);
  REQUIRE(missing.size() == 2);
  CHECK_THAT(missing[0], Contains("--host: needs a value"));
  CHECK_THAT(missing[1], Contains("--num-instances: 'x' is not a whole number"));
  // a typo of a boolean option takes a boolean word with it, not the program
  const auto typo = parse_run_line({"--print-topolgy", "python3", "x.py"});
  CHECK(typo.options.program == std::vector<std::string>{"python3", "x.py"});
  CHECK(parse_run_line({"--print-topolgy", "no", "x.py"}).options.program == std::vector<std::string>{"x.py"});
  CHECK(parse_run_line({"--num-instances", "2", "--help"}).help);
  CHECK(parse_run_line({"--version"}).help);  // CLI11 prints it
  CHECK(popdist::cli::closest_option("--vipu-partiton", {"--vipu-partition", "--num-ilds"}) == "--vipu-partition");
  CHECK(popdist::cli::closest_option("--xyz", {"--vipu-partition", "--num-ilds"}).empty());
}

TEST_CASE("PopRun's kept options: the variables and mpirun options they give", "[cli][poprun]") {
  using popdist::cli::poprun_effects;
  auto options = parse_run_line({"--num-replicas", "32", "--ipus-per-replica", "4", "--num-instances", "2",
                                 "--num-ilds", "2", "--executable-cache-path", "/cache", "--host-subnet",
                                 "10.5.0.0/16", "p"})
                     .options;
  const auto effects = poprun_effects(options, popdist::lookup_in({}));
  using Pair = std::pair<std::string, std::string>;
  CHECK(effects.exports == std::vector<Pair>{{"POPDIST_EXECUTABLE_CACHE_PATH", "/cache"},
                                             {"POPLAR_TARGET_OPTIONS", R"({"ipuLinkDomainSize":"64"})"}});
  CHECK(effects.mpi_global_args == "--mca btl_tcp_if_include 10.5.0.0/16 --mca oob_tcp_if_include 10.5.0.0/16");
  // the user's own POPLAR_TARGET_OPTIONS stands
  const auto own = poprun_effects(options, popdist::lookup_in({{"POPLAR_TARGET_OPTIONS", "{}"}}));
  CHECK(own.exports == std::vector<Pair>{{"POPDIST_EXECUTABLE_CACHE_PATH", "/cache"}});
  CHECK_THAT(own.decisions.at(1), Contains("POPLAR_TARGET_OPTIONS is set"));
  // nothing kept, nothing changed
  const auto none = poprun_effects(parse_run_line({"p"}).options, popdist::lookup_in({}));
  CHECK(none.exports.empty());
  CHECK(none.mpi_global_args.empty());
}
