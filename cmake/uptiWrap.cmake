# SPDX-License-Identifier: MIT
# upti_wrap(TARGET target DESCRIPTION file): runs upti-wrap (installed with UPTI)
# on the description of a runtime's API and compiles the tracing wrappers it
# makes into target, which then includes "<description's name>_upti.h" and
# registers with upti_register_runtime_api() (docs/integrating-a-runtime.md).
# Included by uptiConfig.cmake: find_package(upti) defines it.
function(upti_wrap)
  cmake_parse_arguments(PARSE_ARGV 0 wrap "" "TARGET;DESCRIPTION" "")
  if(NOT wrap_TARGET OR NOT wrap_DESCRIPTION)
    message(FATAL_ERROR "upti_wrap: TARGET and DESCRIPTION are required")
  endif()
  get_filename_component(desc "${wrap_DESCRIPTION}" ABSOLUTE)
  get_filename_component(base "${desc}" NAME_WE)
  set(dir "${CMAKE_CURRENT_BINARY_DIR}/upti-wrap/${wrap_TARGET}")
  file(MAKE_DIRECTORY "${dir}")
  find_package(Python3 REQUIRED COMPONENTS Interpreter)
  add_custom_command(
    OUTPUT "${dir}/${base}_upti.c" "${dir}/${base}_upti.h"
    COMMAND Python3::Interpreter "${UPTI_WRAP_EXECUTABLE}" "${desc}" "${dir}/${base}_upti.c"
            "${dir}/${base}_upti.h"
    DEPENDS "${desc}" "${UPTI_WRAP_EXECUTABLE}"
    COMMENT "upti-wrap ${base}"
    VERBATIM)
  target_sources(${wrap_TARGET} PRIVATE "${dir}/${base}_upti.c")
  # The wrappers include the table's header, found beside the description.
  get_filename_component(desc_dir "${desc}" DIRECTORY)
  target_include_directories(${wrap_TARGET} PRIVATE "${dir}" "${desc_dir}")
endfunction()
