# storage_bench: Cloud Storage API upload/download MiB/s of a large object through the real
# server, against cp on the same disk (src/storage).
add_executable(storage_bench ${CMAKE_CURRENT_LIST_DIR}/storage_bench.cc)
trainyard_target_defaults(storage_bench)
target_link_libraries(storage_bench PRIVATE trainyard_httplib nlohmann_json::nlohmann_json)
target_compile_definitions(storage_bench PRIVATE
    TRAINYARD_TOOL="${PROJECT_BINARY_DIR}/tools/trainyard")
add_dependencies(storage_bench trainyard)
add_dependencies(bench storage_bench)
