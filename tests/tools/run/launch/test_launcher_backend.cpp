// Which launcher popdist run drives: the backend read from real --version texts (recorded under
// launcher_versions/, and the launchers on this machine asked now), the search on PATH and its
// refusal.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "run/launch/find_program.hpp"
#include "run/launch/launcher_backend.hpp"
#include "run/launch/launcher_choice.hpp"

using popdist::cli::Backend;
using popdist::cli::BackendChoice;
using popdist::cli::identify_launcher;

namespace {

std::string recorded(const std::string& file) {
  std::ifstream in(std::string(POPDIST_LAUNCHER_VERSIONS) + "/" + file);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A directory for PATH with executable scripts, removed at the end.
struct ScriptDir {
  std::filesystem::path path;
  ScriptDir() {
    char name[] = "/tmp/popdist-launchers-XXXXXX";
    REQUIRE(::mkdtemp(name) != nullptr);
    path = name;
  }
  ~ScriptDir() { std::filesystem::remove_all(path); }
  void add(const std::string& name, const std::string& body) {
    const auto file = path / name;
    std::ofstream(file) << "#!/bin/sh\n" << body << "\n";
    ::chmod(file.c_str(), 0755);
  }
};

popdist::EnvLookup path_lookup(const std::string& path) {
  return [path](const std::string& name) -> std::optional<std::string> {
    if (name == "PATH") return path;
    return std::nullopt;
  };
}

}  // namespace

TEST_CASE("recorded --version texts name their backend", "[launcher]") {
  const std::vector<std::tuple<std::string, Backend, std::string>> cases{
      {"openmpi-4.1.4.txt", Backend::openmpi, "Open MPI 4.1.4"},
      {"openmpi-4.1.4-as-mpirun.openmpi.txt", Backend::openmpi, "Open MPI 4.1.4"},
      {"openmpi-5.0.11.txt", Backend::openmpi, "Open MPI 5.0.11"},
      {"mpich-4.0.2-hydra.txt", Backend::hydra, "MPICH hydra 4.0.2"},
      {"mpich-5.0.2-hydra.txt", Backend::hydra, "MPICH hydra 5.0.2"},
      {"intel-mpi-2021.19-hydra.txt", Backend::hydra, "Intel MPI 2021.19.0"},
      {"slurm-22.05.8.txt", Backend::srun, "Slurm 22.05.8"},
  };
  for (const auto& [file, backend, description] : cases) {
    INFO(file);
    const auto identity = identify_launcher(recorded(file));
    REQUIRE(identity);
    CHECK(identity->backend == backend);
    CHECK(identity->description == description);
  }
}

TEST_CASE("a text of no known launcher is none, and its first line names it", "[launcher]") {
  CHECK_FALSE(identify_launcher("mpiexec (MPICH) 3.0 gforker\n"));
  CHECK_FALSE(identify_launcher(""));
  // srun without a Slurm configuration answers --version with errors, not its version
  const std::string no_conf = "srun: error: resolve_ctls_from_dns_srv: res_nsearch error: Unknown host\n";
  CHECK_FALSE(identify_launcher(no_conf));
  CHECK(popdist::cli::first_line_of("\n  \n  mpiexec (X) 1.0  \nmore") == "mpiexec (X) 1.0");
  CHECK(popdist::cli::first_line_of("") == "(no output)");
  CHECK(popdist::cli::first_line_of(std::string(300, 'x')).size() == 103);
}

TEST_CASE("the words of --backend", "[launcher]") {
  CHECK(popdist::cli::parse_backend_choice("auto") == BackendChoice::automatic);
  CHECK(popdist::cli::parse_backend_choice("hydra") == BackendChoice::hydra);
  CHECK(popdist::cli::parse_backend_choice("openmpi") == BackendChoice::openmpi);
  CHECK(popdist::cli::parse_backend_choice("srun") == BackendChoice::srun);
  CHECK_FALSE(popdist::cli::parse_backend_choice("mpich"));
  CHECK(popdist::cli::backend_name(Backend::hydra) == "hydra");
}

// The launchers on this machine (.ci/install-deps installs both), asked now.
TEST_CASE("the real mpirun and mpiexec.hydra of this machine are told apart by --version", "[launcher]") {
  const std::string path = std::getenv("PATH") != nullptr ? std::getenv("PATH") : "/usr/bin";
  for (const auto& [name, backend] : {std::pair{"mpirun.openmpi", Backend::openmpi}, {"mpiexec.hydra", Backend::hydra}}) {
    INFO(name << " on PATH " << path << " (installed by .ci/install-deps: openmpi-bin, mpich)");
    const auto program = popdist::cli::find_program(name, path);
    REQUIRE(program);
    const auto output = popdist::cli::version_output(*program, name, std::chrono::seconds(5));
    REQUIRE(output);
    const auto identity = identify_launcher(*output);
    REQUIRE(identity);
    CHECK(identity->backend == backend);
  }
}

TEST_CASE("the first candidate that is the backend asked for wins", "[launcher]") {
  ScriptDir dir;
  dir.add("mpirun", "cat " + std::string(POPDIST_LAUNCHER_VERSIONS) + "/openmpi-4.1.4.txt");
  dir.add("mpiexec", "cat " + std::string(POPDIST_LAUNCHER_VERSIONS) + "/mpich-4.0.2-hydra.txt");
  const auto env = path_lookup(dir.path.string());
  const auto automatic = popdist::cli::find_launcher(BackendChoice::automatic, env);
  REQUIRE(automatic.launcher);
  CHECK(automatic.launcher->backend == Backend::openmpi);
  CHECK(automatic.launcher->name == "mpirun");
  const auto hydra = popdist::cli::find_launcher(BackendChoice::hydra, env);
  REQUIRE(hydra.launcher);
  CHECK(hydra.launcher->backend == Backend::hydra);
  CHECK(hydra.launcher->path == (dir.path / "mpiexec").string());
  CHECK(hydra.launcher->description == "MPICH hydra 4.0.2");
}

TEST_CASE("auto: srun only where no MPI launcher is on PATH", "[launcher]") {
  ScriptDir dir;
  dir.add("srun", "cat " + std::string(POPDIST_LAUNCHER_VERSIONS) + "/slurm-22.05.8.txt");
  const auto only_srun = popdist::cli::find_launcher(BackendChoice::automatic, path_lookup(dir.path.string()));
  REQUIRE(only_srun.launcher);
  CHECK(only_srun.launcher->backend == Backend::srun);
  CHECK(only_srun.launcher->description == "Slurm 22.05.8");
  dir.add("mpiexec", "cat " + std::string(POPDIST_LAUNCHER_VERSIONS) + "/mpich-4.0.2-hydra.txt");
  const auto with_hydra = popdist::cli::find_launcher(BackendChoice::automatic, path_lookup(dir.path.string()));
  REQUIRE(with_hydra.launcher);
  CHECK(with_hydra.launcher->backend == Backend::hydra);  // never silently srun over the user's MPI launcher
}

TEST_CASE("no launcher of the backend asked for: a refusal naming what was found and what to do", "[launcher]") {
  ScriptDir dir;
  dir.add("mpirun", "echo 'mpirun (Other MPI) 9.9'");
  dir.add("mpiexec", "sleep 30");
  const auto env = path_lookup(dir.path.string());
  const auto hydra = popdist::cli::find_launcher(BackendChoice::hydra, env);
  CHECK_FALSE(hydra.launcher);
  CHECK_THAT(hydra.refusal, Catch::Contains("no launcher for --backend hydra: looked for mpiexec.hydra, mpiexec, mpirun"));
  CHECK_THAT(hydra.refusal, Catch::Contains("mpirun says 'mpirun (Other MPI) 9.9' (no launcher popdist run knows)"));
  CHECK_THAT(hydra.refusal, Catch::Contains("mpiexec did not answer --version within 5 s"));
  CHECK_THAT(hydra.refusal, Catch::Contains("install MPICH"));
  const auto none = popdist::cli::find_launcher(BackendChoice::openmpi, path_lookup("/nonexistent"));
  CHECK_THAT(none.refusal, Catch::Contains("on PATH (/nonexistent); found none of them; install Open MPI"));
}
