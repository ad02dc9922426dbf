// trainyard-slurm-task (slurm_task.h). Its composition root: tasks that name an image run through
// podman (container::PodmanReplicaRuntime), which the slurm library itself never depends on.
#include "slurm/slurm_task.h"
#ifdef TRAINYARD_HAVE_CONTAINERS
#include "container/podman_replica_runtime.h"
#endif

int main(int argc, char** argv) {
#ifdef TRAINYARD_HAVE_CONTAINERS
  trainyard::container::PodmanReplicaRuntime containers({});
  return trainyard::slurm::SlurmTaskMain(argc, argv, &containers);
#else
  return trainyard::slurm::SlurmTaskMain(argc, argv);
#endif
}
