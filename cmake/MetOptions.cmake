# Compiler flags shared by every met target: warnings, -Werror, sanitizers.
# The shipped binary never uses -march=native: ISA-specific code lives in its own
# translation units (see met_isa_sources in MetTargets.cmake).
add_library(met_flags INTERFACE)
target_compile_options(met_flags INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wshadow -Wnon-virtual-dtor -Wimplicit-fallthrough>)
target_compile_options(met_flags INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-march=x86-64-v3>)
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  target_compile_options(met_flags INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Wthread-safety>)
endif()
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  # GCC 12 at -O3 reports -Wrestrict inside libstdc++'s std::string code for
  # plain appends (GCC bug 105329); the warning is not about met's code.
  target_compile_options(met_flags INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>)
  # GCC 12 at -O3 also reports -Wmaybe-uninitialized for moves of
  # std::optional<shared_ptr> members inlined through several layers (a
  # moved EngineRequest); which unity batch trips it changes with every file
  # added. It stays a warning; clang's -Wuninitialized gates CI instead.
  target_compile_options(met_flags INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Wno-error=maybe-uninitialized>)
endif()
if(MET_UNITY AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # In a unity build each .cc is #included, so GCC takes it for a header and
  # flags a coroutine frame holding a type from the file's anonymous namespace
  # (-Wsubobject-linkage); one file's internal types are still its own.
  target_compile_options(met_flags INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Wno-subobject-linkage>)
endif()
if(MET_WERROR)
  target_compile_options(met_flags INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
endif()
if(MET_FUZZ)
  # libFuzzer finds bugs through the sanitizers (fuzz/CMakeLists.txt).
  foreach(_san address undefined)
    if(NOT MET_SANITIZE MATCHES "${_san}")
      string(APPEND MET_SANITIZE ",${_san}")
    endif()
  endforeach()
  string(REGEX REPLACE "^," "" MET_SANITIZE "${MET_SANITIZE}")
endif()
if(MET_SANITIZE)
  string(REPLACE "," ";" _met_sanitizers "${MET_SANITIZE}")
  foreach(_san IN LISTS _met_sanitizers)
    target_compile_options(met_flags INTERFACE -fsanitize=${_san})
    target_link_options(met_flags INTERFACE -fsanitize=${_san})
  endforeach()
  target_compile_options(met_flags INTERFACE -fno-omit-frame-pointer -fno-sanitize-recover=all)
  # GCC 12 reports false maybe-uninitialized warnings inside libstdc++ under
  # the sanitizers' instrumentation; they are not met's.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(met_flags INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Wno-maybe-uninitialized>)
  endif()
  # clang 14's -fsanitize=function (part of "undefined") fails to assemble
  # Boost.Asio's code ("Cannot represent a difference across sections").
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang" AND "undefined" IN_LIST _met_sanitizers)
    target_compile_options(met_flags INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-fno-sanitize=function>)
  endif()
  target_link_options(met_flags INTERFACE -fno-sanitize-recover=all)
endif()
