# Trainer throughput benchmark (bench/train_bench.cc + bench/train_article_pipeline.py).
if(TARGET trainyard_train AND TRAINYARD_WITH_TORCH AND TARGET trainyard_model)
  add_executable(train_bench ${CMAKE_CURRENT_LIST_DIR}/train_bench.cc)
  trainyard_target_defaults(train_bench)
  target_compile_definitions(train_bench PRIVATE TRAINYARD_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  target_link_libraries(train_bench PRIVATE trainyard_train CLI11::CLI11)
  set_target_properties(train_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bench)
  add_dependencies(bench train_bench)
endif()
