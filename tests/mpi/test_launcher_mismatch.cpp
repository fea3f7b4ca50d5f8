// init()'s identity check under another MPI's launcher (runtime/launcher_mismatch.hpp): the
// sentence names the library popdist was built against and the launcher seen in the environment,
// and says what to do; nothing when the two agree or no launcher is seen. Pure, without MPI.
#include <catch2/catch.hpp>

#include <string>

#include "popdist/environment.hpp"
#include "runtime/launcher_mismatch.hpp"

using popdist::lookup_in;
using popdist::detail::launcher_mismatch_hint;
using popdist::detail::library_version_line;

namespace {

// As Open MPI reports it: its length counts the terminating NUL.
constexpr char kOpenMpiText[] =
    "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, May 26, 2022\0";
const std::string kOpenMpi(kOpenMpiText, sizeof kOpenMpiText - 1);
const std::string kMpich = "MPICH Version:\t4.0.2\nMPICH Release date:\tThu May  5 15:34:33 CDT 2022\n";
const std::string kIntel = "Intel(R) MPI Library 2021.6 for Linux* OS\n";
const auto kHydra = lookup_in({{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}, {"MPI_LOCALRANKID", "1"}});
const auto kMpirun = lookup_in({{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "4"}});
const auto kSrun = lookup_in({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_STEP_ID", "0"}});

}  // namespace

TEST_CASE("Runtime.logic: the library's version is its first line, spaces squeezed", "[logic]") {
  CHECK(library_version_line(kMpich) == "MPICH Version: 4.0.2");
  CHECK(library_version_line(kIntel) == "Intel(R) MPI Library 2021.6 for Linux* OS");
  REQUIRE(kOpenMpi.back() == '\0');
  CHECK(library_version_line(kOpenMpi).back() == '2');
  CHECK(library_version_line("") == "");
}

TEST_CASE("Runtime.logic: popdist built against Open MPI, started by hydra, names both MPIs and what to do",
          "[logic]") {
  CHECK(launcher_mismatch_hint(kOpenMpi, kHydra) ==
        "popdist is built against Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, May 26, "
        "2022 (MPI_Get_library_version), and MPICH's hydra or Intel MPI started this process (PMI_RANK=1, "
        "PMI_SIZE=2): a launcher of another MPI, so each process is a job of one. Build popdist against the MPI "
        "whose launcher you use (that MPI's mpicxx first on PATH, or MPI_HOME, when CMake or pip builds it), or "
        "launch with the MPI popdist was built against: Open MPI's mpirun (or popdist run)");
}

TEST_CASE("Runtime.logic: an MPICH or Intel MPI build under Open MPI's mpirun names both and hydra", "[logic]") {
  for (const auto& library : {kMpich, kIntel}) {
    const auto hint = launcher_mismatch_hint(library, kMpirun);
    CHECK_THAT(hint, Catch::StartsWith("popdist is built against " + library_version_line(library)) &&
                         Catch::Contains("and Open MPI's mpirun started this process (OMPI_COMM_WORLD_RANK=3, "
                                         "OMPI_COMM_WORLD_SIZE=4)") &&
                         Catch::EndsWith("launch with the MPI popdist was built against: its mpiexec (hydra)"));
  }
}

TEST_CASE("Runtime.logic: no hint when the launcher is the library's own MPI, or no launcher is seen", "[logic]") {
  CHECK(launcher_mismatch_hint(kOpenMpi, kMpirun).empty());
  CHECK(launcher_mismatch_hint(kMpich, kHydra).empty());
  CHECK(launcher_mismatch_hint(kIntel, kHydra).empty());
  CHECK(launcher_mismatch_hint(kOpenMpi, lookup_in({})).empty());
  // A batch script's SLURM_PROCID without a step is no srun launch.
  CHECK(launcher_mismatch_hint(kOpenMpi, lookup_in({{"SLURM_PROCID", "0"}})).empty());
}

TEST_CASE("Runtime.logic: srun without the PMI the library joins names the plugin to pass", "[logic]") {
  CHECK_THAT(launcher_mismatch_hint(kOpenMpi, kSrun),
             Catch::Contains("built against Open MPI v4.1.4") &&
                 Catch::Contains("Slurm's srun started this process (SLURM_PROCID=0, SLURM_NTASKS=2)") &&
                 Catch::EndsWith("pass srun --mpi=pmix"));
  CHECK_THAT(launcher_mismatch_hint(kMpich, kSrun), Catch::Contains("pass srun --mpi=pmi2"));
}

TEST_CASE("Runtime.logic: an MPI popdist does not know is named, with the launcher, as possibly another", "[logic]") {
  CHECK_THAT(launcher_mismatch_hint("Some Vendor MPI 3.1\n", kHydra),
             Catch::StartsWith("popdist is built against Some Vendor MPI 3.1 (MPI_Get_library_version), and MPICH's "
                               "hydra or Intel MPI started this process (PMI_RANK=1, PMI_SIZE=2): when that launcher "
                               "is another MPI's") &&
                 Catch::EndsWith("launch with the MPI popdist was built against: that MPI's own launcher"));
}
