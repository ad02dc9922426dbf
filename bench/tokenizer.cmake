# tokenizer_bench: BertTokenizer throughput (MB/s, texts/s) on the sample corpus, one thread and
# all threads. Run: build/bench/tokenizer_bench [--csv FILE] [--vocab FILE] [--seconds S]
add_executable(tokenizer_bench ${CMAKE_CURRENT_LIST_DIR}/tokenizer_bench.cc)
trainyard_target_defaults(tokenizer_bench)
target_link_libraries(tokenizer_bench PRIVATE trainyard_text trainyard_data)
target_compile_definitions(tokenizer_bench PRIVATE TRAINYARD_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
set_target_properties(tokenizer_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bench)
add_dependencies(bench tokenizer_bench)
