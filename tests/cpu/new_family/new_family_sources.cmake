# A new family is its kernel file plus one manifest line, for the build too: copies kernels/ into
# WORK_DIR, adds a toy family file and its manifest line (one `any`, one `sm90a`), and checks that
# gemm_kernel_sources (kernels/kernel_sources.cmake, what kernels/CMakeLists.txt builds from)
# builds each for its target; then that a manifest line without a file stops the configuration
# with the reason. WORK_DIR is removed afterwards, also when a check fails.
#
#   cmake -DSOURCE_DIR=<repository> -DWORK_DIR=<scratch folder> -P new_family_sources.cmake
cmake_minimum_required(VERSION 3.25)
if(NOT SOURCE_DIR OR NOT WORK_DIR)
  message(FATAL_ERROR "usage: cmake -DSOURCE_DIR=... -DWORK_DIR=... -P new_family_sources.cmake")
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
file(COPY "${SOURCE_DIR}/kernels" DESTINATION "${WORK_DIR}")
set(kernels "${WORK_DIR}/kernels")
include("${kernels}/kernel_sources.cmake")
set(failures)

# The toy families: a file each, a line each.
file(WRITE "${kernels}/ladder/toy_family.cu" "// toy\n")
file(WRITE "${kernels}/tensor/toy_sm90a_family.cu" "// toy\n")
file(APPEND "${kernels}/manifest.inc"
  "GEMM_FAMILY(ladder, toy_family, any, \"toy\", \"toy\")\n"
  "GEMM_FAMILY(tensor_core, toy_sm90a_family, sm90a, \"toy\", \"toy\")\n")
gemm_kernel_sources("${kernels}" any sm90a)
if(NOT "${kernels}/ladder/toy_family.cu" IN_LIST any)
  list(APPEND failures "the new family's file is not among the sources built for every target")
endif()
if(NOT "${kernels}/tensor/toy_sm90a_family.cu" IN_LIST sm90a)
  list(APPEND failures "the new sm90a family's file is not among the sm_90a sources")
endif()
if("${kernels}/tensor/toy_sm90a_family.cu" IN_LIST any)
  list(APPEND failures "the new sm90a family's file is built for every target too")
endif()
foreach(existing registry.cpp ladder/tuned.cu tensor/wgmma_tma.cu)
  if(NOT "${kernels}/${existing}" IN_LIST any AND NOT "${kernels}/${existing}" IN_LIST sm90a)
    list(APPEND failures "${existing} is no longer among the sources")
  endif()
endforeach()

# A line without a file: the configuration stops and names the family.
file(REMOVE "${kernels}/ladder/toy_family.cu")
file(WRITE "${WORK_DIR}/configure.cmake"
  "cmake_minimum_required(VERSION 3.25)\ninclude(\"${kernels}/kernel_sources.cmake\")\ngemm_kernel_sources(\"${kernels}\" a b)\n")
execute_process(COMMAND "${CMAKE_COMMAND}" -P "${WORK_DIR}/configure.cmake"
  RESULT_VARIABLE status ERROR_VARIABLE error OUTPUT_QUIET)
string(REGEX REPLACE "[ \n]+" " " error "${error}")  # CMake wraps long messages
if(status EQUAL 0)
  list(APPEND failures "a manifest line without a file did not stop the configuration")
elseif(NOT error MATCHES "family toy_family needs exactly one file")
  list(APPEND failures "a manifest line without a file stopped the configuration without the reason: ${error}")
endif()

file(REMOVE_RECURSE "${WORK_DIR}")
if(failures)
  list(JOIN failures "\n  " text)
  message(FATAL_ERROR "new family:\n  ${text}")
endif()
message(STATUS "new family: the file and its manifest line are all the build needs")
