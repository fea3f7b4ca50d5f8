// Variables that state a rank or size but form no family popdist can read (see family.hpp).

#include "core/launchers/family.hpp"

namespace popdist::detail {
namespace {

constexpr bool kIndex = true;  ///< the variable is a rank or node index (see StatedVariable)

FamilylessVariable familyless(const char* name, bool index, const char* why) { return {{name, index}, why}; }

}  // namespace

const std::vector<FamilylessVariable>& familyless_variables() {
  constexpr const char* kSubmitit = "submitit's local executor is not a launcher popdist reads";
  static const std::vector<FamilylessVariable> kVariables = {
      // PMIx exports only the rank and namespace; the size is a query to the PMIx server.
      familyless("PMIX_RANK", kIndex,
                 "PMIx sets no size beside it (Open MPI's mpirun and srun --mpi=pmix set it alongside their own "
                 "variables)"),
      // Cray ALPS's aprun: the processing element is the rank, but no variable gives the job's size.
      familyless("ALPS_APP_PE", kIndex, "Cray ALPS (aprun) sets no size beside it"),
      // submitit's LocalExecutor, a stand-in for Slurm on one machine (not a cluster launcher).
      familyless("SUBMITIT_LOCAL_GLOBALID", kIndex, kSubmitit),
      familyless("SUBMITIT_LOCAL_LOCALID", kIndex, kSubmitit),
      familyless("SUBMITIT_LOCAL_NODEID", kIndex, kSubmitit),
      familyless("SUBMITIT_LOCAL_NTASKS", false, kSubmitit),
  };
  return kVariables;
}

}  // namespace popdist::detail
