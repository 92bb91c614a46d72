# Helpers that keep every module built the same way.
#
# met_library(NAME core SOURCES a.cc b.cc DEPS met_gguf PUBLIC_LIBS fmt::fmt)
#   Builds the static library met_<NAME> from src/<NAME>. DEPS are other met
#   libraries; tests/layering_test.cc checks they follow DESIGN.md's table.
# met_isa_sources(TARGET met_tensor ISA avx512 SOURCES x_avx512.cc)
#   Compiles those files with that ISA's flags only; the code is chosen at run
#   time from cpuid (src/core/cpu_features.h), never at build time.
# met_test(MODULE gguf SOURCES a_test.cc LABEL unit DEPS met_gguf)
#   One gtest binary per module and label; every TEST is its own CTest entry,
#   or with MET_TEST_SHARDS=N each binary is N entries (gtest's shards).
# met_unity(TARGET)
#   Compiles TARGET's sources in unity batches when MET_UNITY is on (the root
#   CMakeLists.txt). Sources in one batch share a translation unit, so names in
#   a file's anonymous namespace must not repeat across the files of its
#   target; sources with their own compile options stay single.
# met_test_compile_options(TARGET)
#   Adds MET_TEST_COMPILE_OPTIONS to a test executable's own sources (met_test
#   calls it); bench/CMakeLists.txt adds MET_BENCH_COMPILE_OPTIONS to every
#   benchmark directory-wide.

function(met_unity target)
  if(MET_UNITY)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${MET_UNITY_BATCH})
  endif()
endfunction()

function(met_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PUBLIC_LIBS;PRIVATE_LIBS" ${ARGN})
  add_library(met_${name} STATIC ${ARG_SOURCES})
  target_include_directories(met_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(met_${name} PUBLIC met_flags ${ARG_DEPS} ${ARG_PUBLIC_LIBS}
                        PRIVATE ${ARG_PRIVATE_LIBS})
  met_unity(met_${name})
endfunction()

set(MET_ISA_FLAGS_avx2 "-march=x86-64-v3")
set(MET_ISA_FLAGS_avxvnni "-march=x86-64-v3;-mavxvnni")
set(MET_ISA_FLAGS_avx512 "-march=x86-64-v4;-mavx512vnni;-mavx512bf16")
set(MET_ISA_FLAGS_amx "-march=x86-64-v4;-mavx512vnni;-mavx512bf16;-mamx-tile;-mamx-int8;-mamx-bf16")

function(met_isa_sources)
  cmake_parse_arguments(ARG "" "TARGET;ISA" "SOURCES" ${ARGN})
  target_sources(${ARG_TARGET} PRIVATE ${ARG_SOURCES})
  set(flags ${MET_ISA_FLAGS_${ARG_ISA}})
  if(MET_SANITIZE MATCHES "undefined")
    # ASan still checks every kernel's memory accesses; UBSan's checks on top of
    # it make clang take ten minutes over one attention kernel file.
    list(APPEND flags -fno-sanitize=undefined)
  endif()
  set_source_files_properties(${ARG_SOURCES} TARGET_DIRECTORY ${ARG_TARGET}
    PROPERTIES COMPILE_OPTIONS "${flags}" SKIP_UNITY_BUILD_INCLUSION ON)
endfunction()

# Compile options for the test executables' own sources, never for the
# libraries they exercise (met_testing and its reference forward included).
# A Release build compiles them at -O1, the code under test at -O3: test
# sources are over half of a full build's compile time, and GCC 12 takes
# about two thirds as long over them at -O1 (the README's build under CI:
# 813 -> 594 s). .ci/run's sanitizer build passes -O0 (half of clang's -O1
# time there). The benchmarks take MET_BENCH_COMPILE_OPTIONS instead
# (bench/CMakeLists.txt, directory-wide), empty unless set: the code they
# time is the product as built.
set(MET_TEST_COMPILE_OPTIONS "$<$<CONFIG:Release>:-O1>" CACHE STRING
    "Extra compile options for test executables' sources")
set(MET_BENCH_COMPILE_OPTIONS "" CACHE STRING "Extra compile options for the benchmarks' sources")

# How test executables become CTest entries. 0, the default: every gtest
# TEST is its own entry (gtest_discover_tests), to run and report one by
# name. N > 0: each executable is N entries, named BINARY/shardI, that split
# its tests by gtest's own sharding (GTEST_TOTAL_SHARDS, GTEST_SHARD_INDEX),
# for a build where starting a process is dear: .ci/run's ASan build spends
# about 0.12 s starting each of its ~2,900 test processes, a quarter of its
# test time.
set(MET_TEST_SHARDS 0 CACHE STRING "CTest entries per test executable (0: one per gtest TEST)")

function(met_test_entries target label)
  if(MET_TEST_SHARDS GREATER 0)
    math(EXPR last "${MET_TEST_SHARDS} - 1")
    foreach(i RANGE ${last})
      add_test(NAME ${target}/shard${i} COMMAND ${target})
      set_tests_properties(${target}/shard${i} PROPERTIES LABELS ${label}
        ENVIRONMENT "GTEST_TOTAL_SHARDS=${MET_TEST_SHARDS};GTEST_SHARD_INDEX=${i}")
    endforeach()
  else()
    gtest_discover_tests(${target} PROPERTIES LABELS ${label} DISCOVERY_TIMEOUT 60)
  endif()
endfunction()

function(met_test_compile_options target)
  if(MET_TEST_COMPILE_OPTIONS)
    target_compile_options(${target} PRIVATE ${MET_TEST_COMPILE_OPTIONS})
  endif()
endfunction()

function(met_test)
  cmake_parse_arguments(ARG "" "MODULE;LABEL;NAME" "SOURCES;DEPS" ${ARGN})
  if(NOT ARG_LABEL)
    set(ARG_LABEL unit)
  endif()
  if(NOT ARG_NAME)
    set(ARG_NAME met_${ARG_MODULE}_test)
    if(NOT ARG_LABEL STREQUAL "unit")
      set(ARG_NAME met_${ARG_MODULE}_${ARG_LABEL}_test)
    endif()
  endif()
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} met_testing GTest::gtest GTest::gmock
                        GTest::gtest_main)
  target_compile_definitions(${ARG_NAME} PRIVATE
    MET_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    MET_BINARY_DIR="${PROJECT_BINARY_DIR}")
  met_unity(${ARG_NAME})
  met_test_compile_options(${ARG_NAME})
  met_test_entries(${ARG_NAME} ${ARG_LABEL})
endfunction()
