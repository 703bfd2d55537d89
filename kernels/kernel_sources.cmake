# The kernel library's sources: every .cu and .cpp below kernels/ (so a new family's file is
# built without editing a CMakeLists), split by the `build` column of manifest.inc into the
# sources every target compiles and those of the sm_90a target. A manifest line whose family
# has no file kernels/<folder>/<family>.cu (or .cpp), or has two, stops the configuration with
# the reason. Used by kernels/CMakeLists.txt and by the test that adds a toy family.
#
#   gemm_kernel_sources(ROOT ANY_VAR SM90A_VAR [WATCH])
#     ROOT   the kernels/ folder
#     WATCH  re-run the configuration when a file appears or goes (CONFIGURE_DEPENDS; project
#            mode only) or the manifest changes
function(gemm_kernel_sources root any_var sm90a_var)
  if("WATCH" IN_LIST ARGN)
    file(GLOB_RECURSE sources CONFIGURE_DEPENDS LIST_DIRECTORIES false
      "${root}/*.cu" "${root}/*.cpp")
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${root}/manifest.inc")
  else()
    file(GLOB_RECURSE sources LIST_DIRECTORIES false "${root}/*.cu" "${root}/*.cpp")
  endif()
  list(SORT sources)

  file(STRINGS "${root}/manifest.inc" lines REGEX "^GEMM_FAMILY\\(")
  set(sm90a_sources)
  foreach(line IN LISTS lines)
    if(NOT line MATCHES "^GEMM_FAMILY\\( *([a-z_]+) *, *([A-Za-z0-9_]+) *, *([a-z0-9_]+) *,")
      message(FATAL_ERROR "${root}/manifest.inc: cannot read the line: ${line}")
    endif()
    set(family "${CMAKE_MATCH_2}")
    set(build "${CMAKE_MATCH_3}")
    set(files ${sources})
    list(FILTER files INCLUDE REGEX "/${family}\\.(cu|cpp)$")
    list(LENGTH files count)
    if(NOT count EQUAL 1)
      message(FATAL_ERROR "${root}/manifest.inc: family ${family} needs exactly one file "
        "kernels/<folder>/${family}.cu or .cpp (found ${count}: ${files})")
    endif()
    if(build STREQUAL "sm90a")
      list(REMOVE_ITEM sources ${files})
      list(APPEND sm90a_sources ${files})
    elseif(NOT build STREQUAL "any")
      message(FATAL_ERROR "${root}/manifest.inc: family ${family}: build `${build}` is neither "
        "any nor sm90a")
    endif()
  endforeach()
  set(${any_var} ${sources} PARENT_SCOPE)
  set(${sm90a_var} ${sm90a_sources} PARENT_SCOPE)
endfunction()
