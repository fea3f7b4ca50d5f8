// What popdist run says before the job starts (run/report/announcement.hpp): the command of
// --dry-run and -vv, pasteable, then each instance's host and variables.
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "job/launch_plan.hpp"
#include "run/report/announcement.hpp"

using Catch::Matchers::Contains;
using namespace popdist::cli;

namespace {

/// What print_command writes, read back from a temporary file.
std::string printed(const MpirunCommand& command, const LaunchPlan& plan, const MpirunContext& context) {
  std::FILE* file = std::tmpfile();
  REQUIRE(file != nullptr);
  print_command(file, command, plan, context);
  std::rewind(file);
  std::string text;
  for (int c = std::fgetc(file); c != EOF; c = std::fgetc(file)) text += static_cast<char>(c);
  std::fclose(file);
  return text;
}

}  // namespace

TEST_CASE("print_command: the command on one line, then each instance's host and variables", "[announcement]") {
  const auto plan = plan_launch(2, 4, 1, {{"hostA", std::nullopt}, {"hostB", std::nullopt}});
  MpirunCommand command;
  command.argv = {"mpirun", "-np", "2", "--", "python3", "train file.py"};
  MpirunContext context;
  auto text = printed(command, plan, context);
  CHECK_THAT(text, Contains("mpirun -np 2 -- python3 'train file.py'\n"));
  CHECK_THAT(text, Contains("instance 0 on hostA:") && Contains("instance 1 on hostB:"));
  CHECK_THAT(text, Contains("POPDIST_REPLICA_INDEX_OFFSET=2"));
  CHECK(text.find("MASTER_ADDR") == std::string::npos);
  context.master_addr = "10.0.0.1";
  context.master_port = 29400;
  text = printed(command, plan, context);
  CHECK_THAT(text, Contains(" MASTER_ADDR=10.0.0.1 MASTER_PORT=29400\n"));
}
