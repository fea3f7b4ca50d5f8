# CTest `simulation.fat_tree_256` (label `simulation`): the scale probe in SimGrid SMPI at 256
# simulated instances (tests/scale/check_simulated.py). The probe must be compiled with smpicxx,
# so the native build builds a simulation tree of its own (library + probe only) as an external
# project; without SMPI the test is not registered but skips, naming what is missing.
find_program(POPDIST_SMPIRUN smpirun)
find_program(POPDIST_SMPICXX_FOR_TESTS smpicxx)
find_package(Python3 REQUIRED COMPONENTS Interpreter)
if(POPDIST_SMPIRUN AND POPDIST_SMPICXX_FOR_TESTS)
  include(ExternalProject)
  set(simulation_tree ${PROJECT_BINARY_DIR}/simulation)
  ExternalProject_Add(popdist_simulation_tree
    SOURCE_DIR ${PROJECT_SOURCE_DIR}
    BINARY_DIR ${simulation_tree}
    CMAKE_ARGS -DPOPDIST_SIMULATION=ON -DCMAKE_BUILD_TYPE=Release
               -DCMAKE_C_COMPILER_LAUNCHER=${CMAKE_C_COMPILER_LAUNCHER}
               -DCMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER}
    BUILD_COMMAND ${CMAKE_COMMAND} --build ${simulation_tree} --target popdist_scale_probe
    BUILD_ALWAYS ON   # the sources are this project's: let the inner build decide what changed
    INSTALL_COMMAND ""
    EXCLUDE_FROM_ALL OFF)
  add_test(NAME simulation.fat_tree_256
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/check_simulated.py
                   ${simulation_tree}/tests/scale/popdist_scale_probe
                   ${CMAKE_CURRENT_LIST_DIR}/platforms/fat_tree_256.xml 256)
  set_tests_properties(simulation.fat_tree_256 PROPERTIES LABELS simulation TIMEOUT 300
                                                          ENVIRONMENT "POPDIST_LOG_LEVEL=error")
else()
  add_test(NAME simulation.fat_tree_256
           COMMAND ${CMAKE_COMMAND} -E echo "SKIP: SimGrid SMPI (smpirun, smpicxx) not found: install libsimgrid-dev")
  set_tests_properties(simulation.fat_tree_256 PROPERTIES LABELS simulation SKIP_REGULAR_EXPRESSION "SKIP:")
endif()
