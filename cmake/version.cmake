# SPDX-License-Identifier: MIT
# The project's version lives in include/upti/defines.h only.
#
# upti_read_version(source_dir <var>): sets <var> to "major.minor.patch" read from
# defines.h (called before project(), which takes it as its VERSION).
# upti_check_version_scripts(source_dir version): fails the configure unless every version node
# of every src/program/*/lib*.map is named <PREFIX>_<major>.<minor> with a version no
# newer than the project's, and the newest UPTI_ node of libupti.map is the
# project's <major>.<minor>: a release that adds symbols adds a node, and the
# version and the node change together.
function(upti_read_version source_dir var)
  set(defines ${source_dir}/include/upti/defines.h)
  file(STRINGS ${defines} lines REGEX "^#define UPTI_VERSION_(MAJOR|MINOR|PATCH) ")
  foreach(part MAJOR MINOR PATCH)
    set(${part} "")
    foreach(line ${lines})
      if(line MATCHES "^#define UPTI_VERSION_${part} +([0-9]+)$")
        set(${part} ${CMAKE_MATCH_1})
      endif()
    endforeach()
    if(${part} STREQUAL "")
      message(FATAL_ERROR "upti: ${defines} has no UPTI_VERSION_${part}")
    endif()
  endforeach()
  set(${var} "${MAJOR}.${MINOR}.${PATCH}" PARENT_SCOPE)
endfunction()

function(upti_check_version_scripts source_dir version)
  string(REGEX REPLACE "^([0-9]+\\.[0-9]+).*" "\\1" project_mm "${version}")
  set(PROJECT_VERSION ${version})
  file(GLOB maps ${source_dir}/src/program/*/lib*.map)
  foreach(map ${maps})
    file(READ ${map} text)
    string(REGEX REPLACE "/\\*([^*]|\\*+[^*/])*\\*+/" "" text "${text}")
    string(REGEX MATCHALL "[A-Za-z_][A-Za-z0-9_.]* *{" nodes "${text}")
    if(NOT nodes)
      message(FATAL_ERROR "upti: ${map} has no version node")
    endif()
    foreach(node ${nodes})
      string(REGEX REPLACE " *{$" "" node "${node}")
      if(NOT node MATCHES "^([A-Z_]+)_([0-9]+)\\.([0-9]+)$")
        message(FATAL_ERROR "upti: ${map}: version node ${node} is not <PREFIX>_<major>.<minor>")
      endif()
      set(prefix ${CMAKE_MATCH_1})
      set(mm "${CMAKE_MATCH_2}.${CMAKE_MATCH_3}")
      if(mm VERSION_GREATER project_mm)
        message(FATAL_ERROR "upti: ${map}: node ${node} is newer than the project's version "
                            "${PROJECT_VERSION} (include/upti/defines.h)")
      endif()
      if(map MATCHES "/libupti\\.map$" AND prefix STREQUAL "UPTI")
        if(NOT newest OR mm VERSION_GREATER newest)
          set(newest ${mm})
        endif()
      endif()
    endforeach()
  endforeach()
  if(NOT newest STREQUAL project_mm)
    message(FATAL_ERROR "upti: the newest UPTI_ node of src/program/sdk/libupti.map is UPTI_${newest}, "
                        "the version in include/upti/defines.h is ${PROJECT_VERSION}: "
                        "they must agree (UPTI_${project_mm})")
  endif()
endfunction()
