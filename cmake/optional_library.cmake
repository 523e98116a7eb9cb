# SPDX-License-Identifier: MIT
# An optional library of a target: where header and a library of names are
# found, target is built with UPTI_HAVE_<name>=1 and the library (cached in
# UPTI_<name>_INCLUDE_DIR and UPTI_<name>_LIBRARY; a static target passes the
# library on to what links it); elsewhere a status line says what is unavailable.
function(upti_optional_library target name header names unavailable)
  find_path(UPTI_${name}_INCLUDE_DIR ${header})
  find_library(UPTI_${name}_LIBRARY NAMES ${names})
  if(UPTI_${name}_INCLUDE_DIR AND UPTI_${name}_LIBRARY)
    target_compile_definitions(${target} PRIVATE UPTI_HAVE_${name}=1)
    target_include_directories(${target} PRIVATE ${UPTI_${name}_INCLUDE_DIR})
    target_link_libraries(${target} PRIVATE ${UPTI_${name}_LIBRARY})
  else()
    message(STATUS "${unavailable}")
  endif()
endfunction()
