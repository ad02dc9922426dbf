# Shared build helpers. Every target gets the same warnings and the src/ include root, so
# includes read "common/status.h", "text/bert_tokenizer.h", ...

function(trainyard_target_defaults target)
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  # Two GCC warnings whose reports here are all false positives, and which differ between
  # gcc 12 (Debian 12) and gcc 14 (Debian 13), so a build could not be warning-free on both:
  # -Wmissing-field-initializers flags designated initializers that leave members to their
  # default member initializers (the idiom for option structs here; clang never warns on it);
  # -Wmaybe-uninitialized flags reads of engaged std::optional<int/double> (GCC bug 80635).
  # -Wuninitialized (definite uses) stays on.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -Wno-missing-field-initializers
                                             -Wno-maybe-uninitialized)
  endif()
  if(TRAINYARD_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# Unity build (TRAINYARD_UNITY_BUILD): a target's sources are compiled in batches of
# TRAINYARD_UNITY_BATCH files, one compiler run each, so heavy headers (LibTorch: ~25 s per file;
# nlohmann/json, cpp-httplib, CLI11) are parsed once per batch instead of once per file. It halves
# a clean build of the demo's two binaries on 2 cores (bench/README.md "Build time"). The price:
# file-local names (anonymous namespaces) must be unique within a target, which the build itself
# checks; a file with its own compile options (trainyard_vector_kernels) is compiled alone.
# Test executables are batched too: their files (gtest, gmock, nlohmann/json, cpp-httplib) were
# most of a clean build's compile time when each was compiled alone.
# Macros also leak into the next files of a batch: <resolv.h> (included by cpp-httplib) defines
# `_res`, a parameter name in Eigen's headers, so it is undefined after every file.
function(trainyard_unity target)
  if(TRAINYARD_UNITY_BUILD)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON
                                               UNITY_BUILD_BATCH_SIZE ${TRAINYARD_UNITY_BATCH}
                                               UNITY_BUILD_CODE_AFTER_INCLUDE "#undef _res")
  endif()
endfunction()

# trainyard_library(NAME SOURCES a.cc b.cc DEPS lib1 lib2)
function(trainyard_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  trainyard_target_defaults(${name})
  trainyard_unity(${name})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
endfunction()

# trainyard_test(NAME SOURCES x_test.cc DEPS lib LABELS slow;integration TIMEOUT 300)
# Tests without a label are unit tests (fast, no network, no daemons). Labels: slow, integration.
function(trainyard_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  trainyard_target_defaults(${name})
  trainyard_unity(${name})
  # Line tables only for the tests' own files (gtest expansions are most of their debug info): a
  # failure's backtrace still has files and lines, the libraries under test keep full -g, and a
  # test batch compiles ~30% faster into objects a quarter the size (faster links too).
  target_compile_options(${name} PRIVATE $<$<CONFIG:RelWithDebInfo>:-g1>)
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main GTest::gmock)
  target_compile_definitions(${name} PRIVATE
      TRAINYARD_SOURCE_DIR="${PROJECT_SOURCE_DIR}" TRAINYARD_BINARY_DIR="${PROJECT_BINARY_DIR}")
  add_test(NAME ${name} COMMAND ${name})
  set(labels unit)
  if(ARG_LABELS)
    set(labels ${ARG_LABELS})
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  set_tests_properties(${name} PROPERTIES LABELS "${labels}" TIMEOUT ${ARG_TIMEOUT}
      ENVIRONMENT "TRAINYARD_BINARY_DIR=${PROJECT_BINARY_DIR};TRAINYARD_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
endfunction()
