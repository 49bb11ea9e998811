# kernels_bench: matmul GEMV (GB/s of weights) and GEMM (TOP/s) per weight type, plus attention, on the best CPU
# backend (KAIRO_ISA=avx2|avx512|amx to pick another; KAIRO_BENCH_NO_PACK=1 to skip load-time repacking).
add_executable(kernels_bench ${CMAKE_CURRENT_LIST_DIR}/kernels_bench.cpp)
target_link_libraries(kernels_bench PRIVATE kairo_kernels benchmark::benchmark)
set_target_properties(kernels_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
