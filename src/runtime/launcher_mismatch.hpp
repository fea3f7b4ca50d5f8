#pragma once
// Why MPI's world may not be the launcher's: the library popdist was built against was started by
// another MPI's launcher. Each MPI starts only the processes its own launcher told it of (Open
// MPI's mpirun through OMPI_*/PMIx, MPICH's hydra and Intel MPI through PMI_*), so under a
// foreign launcher every process is a job of one: "MPI makes it rank 0 of 1". init()'s identity
// check (runtime.cpp) then names both MPIs -- the library's, from MPI_Get_library_version, and
// the launcher's, from its variables -- and what to do. Pure: the version text and the
// environment in, the sentence out, so that its wording is tested without MPI.

#include <string>
#include <string_view>

#include "popdist/environment.hpp"

namespace popdist::detail {

/// MPI_Get_library_version's first line, its spaces and tabs squeezed ("MPICH Version: 4.0.2").
[[nodiscard]] std::string library_version_line(std::string_view library_version);

/// The sentence that names both MPIs and what to do, when the launcher's variables show another
/// MPI than the library's (or srun without a PMI the library speaks); "" when they agree or no
/// launcher is seen (then the variables themselves are the suspects).
[[nodiscard]] std::string launcher_mismatch_hint(std::string_view library_version, const EnvLookup& env);

}  // namespace popdist::detail
