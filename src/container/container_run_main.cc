// trainyard-container-run: one container replica attempt (container_run.h).
#include "container/container_run.h"

int main(int argc, char** argv) { return trainyard::container::ContainerRunMain(argc, argv); }
