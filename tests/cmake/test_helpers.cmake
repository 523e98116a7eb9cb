# SPDX-License-Identifier: MIT
# Helpers the test folders share.

# upti_python_cases(SCRIPT <file.py> PREFIX <test name prefix> [ROOT <dir>]
#                   LABELS <label>... [TIMEOUT <s>] [SKIP_77] [PASS_CASE]
#                   [NEEDS <target>...] [AFTER <arg>...] CASES <case>...)
# Adds one test <PREFIX><case> per case, running
#   python3 <SCRIPT> <ROOT> <case> <AFTER...>
# with SCRIPT relative to the calling folder and ROOT the build tree unless
# given. SKIP_77: exit status 77 means skipped. PASS_CASE: the test passes
# only when its output says "PASS <case>". NEEDS: without one of these
# targets, or without python3, a STATUS line says the cases are skipped.
function(upti_python_cases)
  cmake_parse_arguments(PC "SKIP_77;PASS_CASE" "SCRIPT;PREFIX;ROOT;TIMEOUT" "LABELS;NEEDS;AFTER;CASES"
                        ${ARGN})
  foreach(target ${PC_NEEDS})
    if(NOT TARGET ${target} OR NOT Python3_Interpreter_FOUND)
      file(RELATIVE_PATH folder ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
      string(REPLACE ";" ", " needs "${PC_NEEDS}")
      message(STATUS "${folder}: ${needs} or python3 missing; skipped")
      return()
    endif()
  endforeach()
  if(NOT PC_ROOT)
    set(PC_ROOT ${CMAKE_BINARY_DIR})
  endif()
  foreach(case ${PC_CASES})
    set(name ${PC_PREFIX}${case})
    add_test(NAME ${name}
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/${PC_SCRIPT}
                     ${PC_ROOT} ${case} ${PC_AFTER})
    set_tests_properties(${name} PROPERTIES LABELS "${PC_LABELS}")
    if(PC_TIMEOUT)
      set_tests_properties(${name} PROPERTIES TIMEOUT ${PC_TIMEOUT})
    endif()
    if(PC_SKIP_77)
      set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77)
    endif()
    if(PC_PASS_CASE)
      set_tests_properties(${name} PROPERTIES PASS_REGULAR_EXPRESSION "PASS ${case}")
    endif()
  endforeach()
endfunction()

# upti_test_program(<target> <source>... [LIBS <lib>...] [RING_HEADERS])
# A test program with the shared C test helpers (tests/common), linked with
# LIBS; RING_HEADERS adds src/common for the ring and record layouts.
function(upti_test_program target)
  cmake_parse_arguments(TP "RING_HEADERS" "" "LIBS" ${ARGN})
  add_executable(${target} ${TP_UNPARSED_ARGUMENTS})
  target_link_libraries(${target} PRIVATE upti_test_common ${TP_LIBS})
  if(TP_RING_HEADERS)
    target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/src/common)
  endif()
endfunction()

# upti_layer_tool(<target> <source> INCLUDE <dir>... [CHAIN] [DEFINES <definition>...])
# A runtime layer's test tool: its part <source> with tests/common/layer_tool.c
# (layer_tool.h); CHAIN: the variant that replaces a call through the
# intercept table.
function(upti_layer_tool target source)
  cmake_parse_arguments(LT "CHAIN" "" "INCLUDE;DEFINES" ${ARGN})
  add_library(${target} SHARED ${source} ${PROJECT_SOURCE_DIR}/tests/common/layer_tool.c)
  target_link_libraries(${target} PRIVATE upti Threads::Threads upti_test_common)
  target_include_directories(${target} PRIVATE ${LT_INCLUDE})
  target_compile_definitions(${target} PRIVATE ${LT_DEFINES})
  if(LT_CHAIN)
    target_compile_definitions(${target} PRIVATE CHAIN=1)
  endif()
endfunction()
