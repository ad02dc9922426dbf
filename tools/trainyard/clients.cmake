# Google's own clients against the real server (src/storage, src/cloud_logging, the Vertex routes):
#   gcloud_e2e_test: the gcloud CLI (skipped where /usr/bin/gcloud is absent);
#   ai_platform_e2e_test: `gcloud ai-platform jobs` (AI Platform Training's API; same skip);
#   node_*_client_test: the official Node.js clients (scripts/install-node-clients.sh installs
#   them into <build>/node-clients; skipped when missing); node_prediction_client_test serves a
#   trainyard-bert model, so it needs trainyard-bert built beside the server.
trainyard_e2e_test(gcloud_e2e_test TIMEOUT 600)
set_tests_properties(gcloud_e2e_test PROPERTIES SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
trainyard_e2e_test(ai_platform_e2e_test TIMEOUT 900)
set_tests_properties(ai_platform_e2e_test PROPERTIES SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")

find_program(NODE_EXECUTABLE node)
if(NODE_EXECUTABLE)
  foreach(client storage aiplatform aiplatform_pipeline prediction batch_prediction)
    add_test(NAME node_${client}_client_test
             COMMAND ${NODE_EXECUTABLE} ${PROJECT_SOURCE_DIR}/test/node/${client}_client_test.js)
    set_tests_properties(node_${client}_client_test PROPERTIES
        LABELS integration TIMEOUT 300 SKIP_RETURN_CODE 77
        ENVIRONMENT "TRAINYARD_BINARY_DIR=${PROJECT_BINARY_DIR};NODE_PATH=${PROJECT_BINARY_DIR}/node-clients/node_modules")
  endforeach()
endif()

# The official Python clients from PyPI (the project's venv, scripts/python-venv.sh) against the
# real server, through scripts/venv-python.sh: Skipped without the venv, failed instead where
# TRAINYARD_REQUIRE_PYPI=1 (CI). python_endpoints_client_test serves a trainyard-bert model
# (Endpoints and online prediction), so it needs trainyard-bert built beside the server.
foreach(client storage aiplatform endpoints batch)
  add_test(NAME python_${client}_client_test
           COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/venv-python.sh
                   ${PROJECT_SOURCE_DIR}/test/python_clients/${client}_client_test.py)
  set_tests_properties(python_${client}_client_test PROPERTIES
      LABELS integration TIMEOUT 300 SKIP_RETURN_CODE 77
      ENVIRONMENT "TRAINYARD_BINARY_DIR=${PROJECT_BINARY_DIR};PYTHONPATH=${PROJECT_SOURCE_DIR}/test/python_clients")
endforeach()
# Their serving replicas take a core each and a deploy fails once it has waited 60 s for room:
# not both on a small host at once.
set_tests_properties(python_endpoints_client_test python_batch_client_test PROPERTIES
                     RESOURCE_LOCK serving_replicas)
if(NODE_EXECUTABLE)
  set_tests_properties(node_prediction_client_test node_batch_prediction_client_test PROPERTIES
                       RESOURCE_LOCK serving_replicas)
endif()

# Seed 004's notebook (examples/notebooks) executed headless by nbclient with the venv's kernel.
add_test(NAME python_notebook_test
         COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/venv-python.sh
                 ${PROJECT_SOURCE_DIR}/test/python_clients/notebook_test.py)
set_tests_properties(python_notebook_test PROPERTIES
    LABELS integration TIMEOUT 900 SKIP_RETURN_CODE 77
    ENVIRONMENT "TRAINYARD_BINARY_DIR=${PROJECT_BINARY_DIR};PYTHONPATH=${PROJECT_SOURCE_DIR}/test/python_clients")

# The Vertex SDK's 1.x major (its own venv, scripts/venv/sdk1.in): custom jobs, a failed job and
# one training class, the same test code as python_aiplatform_client_test.
add_test(NAME python_aiplatform1_client_test
         COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/venv-python.sh
                 ${PROJECT_SOURCE_DIR}/test/python_clients/aiplatform_client_test.py
                 AiplatformClientTest.test_seed_004_chief_and_workers_run_to_succeeded
                 AiplatformClientTest.test_custom_training_job_returns_a_registered_model
                 AiplatformClientTest.test_a_failed_job_raises_with_trainyards_reason)
set_tests_properties(python_aiplatform1_client_test PROPERTIES
    LABELS integration TIMEOUT 300 SKIP_RETURN_CODE 77
    ENVIRONMENT "TRAINYARD_VENV_SET=sdk1;TRAINYARD_BINARY_DIR=${PROJECT_BINARY_DIR};PYTHONPATH=${PROJECT_SOURCE_DIR}/test/python_clients")

# Seed 002's trainer package (examples/sentiment_package) with its PyPI dependencies through the
# real gcloud and the SDK, in the trainyard/pytorch image: skipped without root, podman, the
# image in $TRAINYARD_REGISTRY, gcloud or a package index; failed instead in CI.
add_test(NAME python_package_deps_test
         COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/venv-python.sh
                 ${PROJECT_SOURCE_DIR}/test/python_clients/package_deps_test.py)
set_tests_properties(python_package_deps_test PROPERTIES
    LABELS integration TIMEOUT 1500 SKIP_RETURN_CODE 77
    ENVIRONMENT "TRAINYARD_BINARY_DIR=${PROJECT_BINARY_DIR};PYTHONPATH=${PROJECT_SOURCE_DIR}/test/python_clients")
