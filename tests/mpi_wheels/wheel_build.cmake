# Included into the project's top-level CMakeLists.txt by build_against.sh
# (CMAKE_PROJECT_popdist_INCLUDE): the probe program of the mpi_wheels tests, beside the library
# and `popdist` built against one PyPI MPI.
add_executable(popdist_wheel_probe ${CMAKE_CURRENT_LIST_DIR}/wheel_probe.cpp)
target_link_libraries(popdist_wheel_probe PRIVATE popdist::popdist)
target_compile_options(popdist_wheel_probe PRIVATE -Wall -Wextra)

# The wheels' mpicc adds -pthread to every compile, which Debian's Open MPI does not: without it,
# the objects that do not include <mpi.h> compile exactly as in the main build, and ccache serves
# them (on glibc, -pthread at compile time only defines _REENTRANT; the link keeps it).
function(popdist_wheel_compile_options)
  get_target_property(options MPI::MPI_C INTERFACE_COMPILE_OPTIONS)
  if(options)
    list(FILTER options EXCLUDE REGEX "-pthread$")  # FindMPI wraps it in a generator expression (CUDA)
    set_target_properties(MPI::MPI_C PROPERTIES INTERFACE_COMPILE_OPTIONS "${options}")
  endif()
endfunction()
cmake_language(DEFER CALL popdist_wheel_compile_options)
