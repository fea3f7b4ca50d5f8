# cmake -P script run by the package.consumer test:
#   1. cmake --install BUILD_DIR into WORK_DIR/prefix (a fresh prefix every time);
#   2. check the installed tree has the headers, both libraries, the CMake package and the command;
#   3. configure, build and run tests/package/consumer against that prefix only, twice: as a
#      C++-only project and with C enabled (the two paths through popdistConfig.cmake);
#   4. run the installed `popdist --version`.
# Inputs: BUILD_DIR CONSUMER_SOURCE WORK_DIR GENERATOR MAKE_PROGRAM CXX_COMPILER C_COMPILER EXPECTED_VERSION

foreach(input BUILD_DIR CONSUMER_SOURCE WORK_DIR GENERATOR CXX_COMPILER C_COMPILER EXPECTED_VERSION)
  if(NOT DEFINED ${input})
    message(FATAL_ERROR "run_consumer.cmake: -D${input}=... is missing")
  endif()
endforeach()

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${what} failed (${status}):\n$ ${ARGN}\n${out}\n${err}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
run_step("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

# The library directory depends on GNUInstallDirs (lib, lib64, lib/<multiarch>): find it.
file(GLOB_RECURSE config_files ${prefix}/*/popdistConfig.cmake)
list(LENGTH config_files config_count)
if(NOT config_count EQUAL 1)
  message(FATAL_ERROR "expected one popdistConfig.cmake under ${prefix}, found: ${config_files}")
endif()
get_filename_component(package_dir ${config_files} DIRECTORY)
get_filename_component(lib_dir ${package_dir}/../.. ABSOLUTE)
foreach(file ${prefix}/include/popdist/popdist.hpp ${prefix}/include/popdist/version.hpp
             ${prefix}/include/popdist/runtime.hpp ${prefix}/include/popdist/registry.hpp
             ${package_dir}/popdistConfigVersion.cmake ${package_dir}/popdistTargets.cmake
             ${lib_dir}/libpopdist.a ${lib_dir}/libpopdist_core.a ${prefix}/bin/popdist)
  if(NOT EXISTS ${file})
    message(FATAL_ERROR "the install is missing ${file}")
  endif()
endforeach()

foreach(variant cxx_only with_c)
  if(variant STREQUAL "with_c")
    set(enable_c ON)
  else()
    set(enable_c OFF)
  endif()
  set(build ${WORK_DIR}/build-${variant})
  set(configure ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE} -B ${build} -G ${GENERATOR}
      -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_C_COMPILER=${C_COMPILER}
      -DCONSUMER_ENABLE_C=${enable_c}
      # Only the prefix may supply popdist: no package registries.
      -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF)
  if(MAKE_PROGRAM)
    list(APPEND configure -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM})
  endif()
  run_step("configuring the consumer (${variant})" ${configure})
  if(NOT step_output MATCHES "popdist_DIR=${package_dir}")
    message(FATAL_ERROR "the consumer (${variant}) did not take popdist from ${package_dir}:\n${step_output}")
  endif()
  run_step("building the consumer (${variant})" ${CMAKE_COMMAND} --build ${build})
  run_step("running the consumer (${variant})" ${build}/popdist_consumer)
  foreach(expected
          "popdist ${EXPECTED_VERSION} headers ${EXPECTED_VERSION}"
          "launcher openmpi instance 3 of 4 replicas 6\\+2 of 8 device id 27"
          "group of replica 5: 1 of 4"
          "caught EnvironmentError naming the variable"
          "backend initialized: no"
          "PopDist API: instance 0 of 1, gathered 7, half 0.5, popdist_error caught")
    if(NOT step_output MATCHES "${expected}")
      message(FATAL_ERROR "the consumer (${variant}) printed:\n${step_output}\nexpected a line matching: ${expected}")
    endif()
  endforeach()
  message(STATUS "consumer (${variant}) OK:\n${step_output}")
endforeach()

run_step("the installed popdist --version" ${prefix}/bin/popdist --version)
if(NOT step_output MATCHES "^popdist ${EXPECTED_VERSION}")
  message(FATAL_ERROR "the installed popdist --version printed: ${step_output}")
endif()
message(STATUS "installed package OK: ${prefix}")
