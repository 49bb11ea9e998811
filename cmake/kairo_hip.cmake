# Included by the top-level CMakeLists.txt when KAIRO_HIP=ON: the CUDA kernel sources (src/kernels/cuda/*.cu)
# compiled for AMD GPUs by Debian's hipcc (HIP 5.2, clang 15) into kairo_kernels_hip, with KAIRO_HIP defined so
# kernels/cuda/gpu_runtime.h maps the CUDA runtime to HIP. KAIRO_HIP_ARCHS picks the targets: gfx90a (MI200, CDNA2,
# wave64) and gfx1030 (RX 6800-6900, RDNA2, wave32), the targets Debian 12's HIP can build.
#
# CMake's HIP language cannot be used: Debian installs hip-lang's CMake package under the multiarch directory,
# where CMake 3.25's compiler detection does not look. So each source is one custom command, with hipcc's depfile
# for header dependencies, and the objects make a static library.
set(KAIRO_HIP_ARCHS "gfx90a;gfx1030" CACHE STRING "AMD GPU targets for the HIP build of the CUDA kernels")
find_program(KAIRO_HIPCC hipcc)
if(NOT KAIRO_HIPCC)
  message(FATAL_ERROR "KAIRO_HIP is ON but hipcc is missing: apt-get install hipcc (scripts/install-deps.sh --hip)")
endif()

set(kairo_hip_flags -x hip -std=c++20 -O3 -DNDEBUG -DKAIRO_HIP=1 -fPIC -Wall -Wno-unused-parameter
                    -Wno-unused-result -I${PROJECT_SOURCE_DIR}/src)
foreach(arch IN LISTS KAIRO_HIP_ARCHS)
  list(APPEND kairo_hip_flags --offload-arch=${arch})
endforeach()

file(GLOB kairo_hip_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/kernels/cuda/*.cu)
set(kairo_hip_objects "")
foreach(src IN LISTS kairo_hip_sources)
  get_filename_component(stem ${src} NAME_WE)
  set(obj ${CMAKE_BINARY_DIR}/hip/${stem}.o)
  add_custom_command(
    OUTPUT ${obj}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/hip
    COMMAND ${KAIRO_HIPCC} ${kairo_hip_flags} -MD -MF ${obj}.d -c ${src} -o ${obj}
    DEPENDS ${src}
    DEPFILE ${obj}.d
    COMMENT "hipcc ${stem}.cu (${KAIRO_HIP_ARCHS})"
    VERBATIM)
  list(APPEND kairo_hip_objects ${obj})
endforeach()
set_source_files_properties(${kairo_hip_objects} PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
add_library(kairo_kernels_hip STATIC ${kairo_hip_objects})
set_target_properties(kairo_kernels_hip PROPERTIES LINKER_LANGUAGE CXX)
