# Sanitizer and fuzzing instrumentation for every target of the build (included by the top-level
# CMakeLists.txt before any target is defined).
#
# POPDIST_SANITIZE  "" (default), "address,undefined" or "thread": compiles and links everything
#   with -fsanitize=<value>. Errors are fatal (-fno-sanitize-recover=all): a UBSan report fails
#   the test that triggered it instead of scrolling past. .ci/sanitizers runs the suites so.
# POPDIST_FUZZ  ON: also instruments everything for libFuzzer's coverage feedback (clang), so that
#   the harnesses of tests/fuzz learn from popdist's own branches, not only their own.
set(POPDIST_SANITIZE "" CACHE STRING "Sanitizers for every target: '', 'address,undefined' or 'thread'")
option(POPDIST_FUZZ "Instrument every target for libFuzzer (clang)" OFF)

if(POPDIST_SANITIZE)
  if(NOT POPDIST_SANITIZE MATCHES "^(address|undefined|address,undefined|undefined,address|thread)$")
    message(FATAL_ERROR "POPDIST_SANITIZE='${POPDIST_SANITIZE}': expected '', 'address,undefined' or 'thread'")
  endif()
  add_compile_options(-fsanitize=${POPDIST_SANITIZE} -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${POPDIST_SANITIZE})
endif()
if(POPDIST_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "POPDIST_FUZZ=ON needs clang (CMAKE_CXX_COMPILER=clang++), not ${CMAKE_CXX_COMPILER_ID}")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
  add_link_options(-fsanitize=fuzzer-no-link)
endif()
