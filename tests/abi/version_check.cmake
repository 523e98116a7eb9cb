# SPDX-License-Identifier: MIT
# cmake -DSOURCE_DIR=<tree> -P version_check.cmake: the configure's version
# checks (cmake/version.cmake) on a tree, for tests/abi/check_version.py.
include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/version.cmake)
upti_read_version(${SOURCE_DIR} version)
upti_check_version_scripts(${SOURCE_DIR} ${version})
message(STATUS "version ${version}: version scripts agree")
