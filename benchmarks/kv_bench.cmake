# kv_bench: the KV bookkeeping alone (block pool, KV cache manager, scheduler), no model: what the always-on
# invariant checks cost per block operation and per scheduler step.
add_executable(kv_bench ${CMAKE_CURRENT_LIST_DIR}/kv_bench.cpp)
target_link_libraries(kv_bench PRIVATE kairo_engine benchmark::benchmark)
set_target_properties(kv_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
