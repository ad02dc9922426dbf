# FakeExecutor: an in-memory, test-driven Executor (owned by the control plane; included from
# src/executor/CMakeLists.txt, or from src/controller until that exists).
add_library(trainyard_executor_fake STATIC ${CMAKE_CURRENT_LIST_DIR}/fake_executor.cc)
trainyard_target_defaults(trainyard_executor_fake)
target_link_libraries(trainyard_executor_fake PUBLIC trainyard_common Threads::Threads)

trainyard_test(executor_fake_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/fake_executor_test.cc
  DEPS trainyard_executor_fake)
