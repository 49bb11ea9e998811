# Included by the top-level CMakeLists.txt when KAIRO_CUDA=ON: the CUDA language, target architectures and toolkit.
# KAIRO_CUDA_ARCHS picks the architectures: real SASS for A100 (80), L40/4090 (89), H100/H200 (90) plus PTX for
# newer GPUs to JIT. CI, which only compiles, passes -DKAIRO_CUDA_ARCHS=90-real to keep nvcc time down.
set(KAIRO_CUDA_ARCHS "80-real;89-real;90-real;90-virtual" CACHE STRING "CUDA architectures for the CUDA backend")
if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
  set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
endif()
set(CMAKE_CUDA_ARCHITECTURES ${KAIRO_CUDA_ARCHS})
enable_language(CUDA)
# CUDA sources inherit the project's CXX_STANDARD 20, but CMake 3.25 knows no C++20 flag for nvcc (3.26 does).
if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
endif()
find_package(CUDAToolkit REQUIRED)

# The project-wide add_compile_options() are gcc flags that nvcc rejects (-Wall); in a directory holding .cu files,
# keep them for C++ sources only and hand the warnings to nvcc's host compiler. (Sanitizers are not applied to
# device code.)
function(kairo_cuda_directory_flags)
  get_directory_property(opts COMPILE_OPTIONS)
  set(wrapped "")
  foreach(opt IN LISTS opts)
    list(APPEND wrapped "$<$<COMPILE_LANGUAGE:CXX>:${opt}>")
  endforeach()
  list(APPEND wrapped "$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra,-Wno-unused-parameter>")
  set_directory_properties(PROPERTIES COMPILE_OPTIONS "${wrapped}")
endfunction()
