# tokenizer_bench: tokenizer throughput in MB/s per tokenizer type (needs ../shared/vocab).
add_executable(tokenizer_bench ${CMAKE_CURRENT_LIST_DIR}/tokenizer_bench.cpp)
target_link_libraries(tokenizer_bench PRIVATE kairo_tokenizer benchmark::benchmark)
target_compile_definitions(tokenizer_bench PRIVATE KAIRO_SHARED_DIR="${PROJECT_SOURCE_DIR}/../shared")
set_target_properties(tokenizer_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
