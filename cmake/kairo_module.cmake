# kairo_module(NAME DEPS <targets...> [EXCLUDE <subfolders...>])
# One static library per folder under src/: every .cpp under it (recursively) is part of the module, so adding a
# file needs no CMake edit. EXCLUDE names subfolders that are modules of their own (kernels/vulkan). Files named *_avx2.cpp / *_avxvnni.cpp (AVX2 with
# AVX-VNNI) / *_avx512.cpp / *_amx.cpp are compiled for that ISA only;
# the code that calls them checks the CPU at run time. On 64-bit ARM those files are left out and *_neon.cpp (base
# Advanced SIMD, every aarch64 CPU) / *_neondot.cpp (plus the dot-product extension) / *_neoni8mm.cpp (plus the int8
# matrix-multiply extension) are compiled instead.
set(KAIRO_AVX2_FLAGS -mavx2 -mfma -mf16c)
set(KAIRO_AVXVNNI_FLAGS ${KAIRO_AVX2_FLAGS} -mavxvnni)
# No -mavx512bf16 here: the AVX-512 path runs on CPUs without AVX512_BF16 (Cascade Lake, Ice Lake), so its files must
# not let the compiler use it; the one bf16 loop outside the AMX files asks for it by a target attribute.
set(KAIRO_AVX512_FLAGS -mavx2 -mfma -mf16c -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx512vnni)
set(KAIRO_AMX_FLAGS ${KAIRO_AVX512_FLAGS} -mavx512bf16 -mamx-tile -mamx-int8 -mamx-bf16)
set(KAIRO_NEONDOT_FLAGS -march=armv8.2-a+dotprod)
set(KAIRO_NEONI8MM_FLAGS -march=armv8.2-a+dotprod+i8mm)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64|ARM64)$")
  set(KAIRO_TARGET_ARM64 ON)
else()
  set(KAIRO_TARGET_ARM64 OFF)
endif()

function(kairo_module name)
  cmake_parse_arguments(ARG "" "" "DEPS;EXCLUDE" ${ARGN})
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  foreach(sub IN LISTS ARG_EXCLUDE)
    list(FILTER sources EXCLUDE REGEX "^${CMAKE_CURRENT_SOURCE_DIR}/${sub}/")
  endforeach()
  if(KAIRO_TARGET_ARM64)
    list(FILTER sources EXCLUDE REGEX "_(avx2|avxvnni|avx512|amx)\\.cpp$")
  else()
    list(FILTER sources EXCLUDE REGEX "_(neon|neondot|neoni8mm)\\.cpp$")
  endif()
  if(NOT sources)
    add_library(kairo_${name} INTERFACE)
    target_include_directories(kairo_${name} INTERFACE ${PROJECT_SOURCE_DIR}/src)
    target_link_libraries(kairo_${name} INTERFACE ${ARG_DEPS})
    return()
  endif()
  add_library(kairo_${name} STATIC ${sources})
  target_include_directories(kairo_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(kairo_${name} PUBLIC ${ARG_DEPS})
  foreach(src IN LISTS sources)
    if(src MATCHES "_avx2\\.cpp$")
      set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS "${KAIRO_AVX2_FLAGS}")
    elseif(src MATCHES "_avxvnni\\.cpp$")
      set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS "${KAIRO_AVXVNNI_FLAGS}")
    elseif(src MATCHES "_avx512\\.cpp$")
      set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS "${KAIRO_AVX512_FLAGS}")
    elseif(src MATCHES "_amx\\.cpp$")
      set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS "${KAIRO_AMX_FLAGS}")
    elseif(src MATCHES "_neondot\\.cpp$")
      set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS "${KAIRO_NEONDOT_FLAGS}")
    elseif(src MATCHES "_neoni8mm\\.cpp$")
      set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS "${KAIRO_NEONI8MM_FLAGS}")
    endif()
  endforeach()
endfunction()

# kairo_test(MODULE DEPS <targets...>): one GoogleTest binary per tests/<module>/ folder.
function(kairo_test name)
  # UNITY: the files may share a translation unit (no two define the same name in the same namespace): with
  # KAIRO_UNITY_BUILD on, they compile in batches of 8 (test_server: 274 -> 116 s of compiler time).
  cmake_parse_arguments(ARG "UNITY" "" "DEPS" ${ARGN})
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  # Tests of one architecture's kernels (row_tiles_avx2_test.cpp, row_tiles_neon_test.cpp) call functions that exist
  # only in builds for it.
  if(KAIRO_TARGET_ARM64)
    list(FILTER sources EXCLUDE REGEX "_(avx2|avxvnni|avx512|amx)_test\\.cpp$")
  else()
    list(FILTER sources EXCLUDE REGEX "_(neon|neondot|neoni8mm)_test\\.cpp$")
  endif()
  if(NOT sources)
    return()
  endif()
  add_executable(test_${name} ${sources})
  # Test code is glue around the library (which keeps the release flags): at -O1 it compiles about a third faster
  # than at -O3 (tests/server/chat_test.cpp: 14.5 -> 9.2 s), and the suite's time is spent in the library (the
  # speculative-sampling tests took the same time either way).
  target_compile_options(test_${name} PRIVATE $<$<CONFIG:Release>:-O1>)
  if(KAIRO_UNITY_BUILD AND ARG_UNITY)
    set_target_properties(test_${name} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
  endif()
  target_link_libraries(test_${name} PRIVATE ${ARG_DEPS} kairo_testing GTest::gtest GTest::gmock GTest::gtest_main)
  gtest_discover_tests(test_${name} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS ${name})
endfunction()
