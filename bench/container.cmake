# container_bench: warm-image container start -> first output (podman run, and the detached path
# PodmanEngine uses) against a host process start. Needs podman, runc and busybox-static.
add_executable(container_bench ${CMAKE_CURRENT_LIST_DIR}/container_bench.cc)
trainyard_target_defaults(container_bench)
target_link_libraries(container_bench PRIVATE trainyard_container nlohmann_json::nlohmann_json)
add_dependencies(bench container_bench)
