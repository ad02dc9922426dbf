// trainyard-slurm-task (slurm_task.h). Its composition root: tasks that name an image run through
// podman (container::PodmanReplicaRuntime), which the slurm library itself never depends on.
#include "slurm/slurm_task.h"
#ifdef TRAINYARD_HAVE_CONTAINERS
#include "container/podman_replica_runtime.h"
#endif

int main(int argc, char** argv) {
#ifdef TRAINYARD_HAVE_CONTAINERS
  return trainyard::slurm::SlurmTaskMain(argc, argv, [](std::chrono::milliseconds pull_timeout) {
    trainyard::container::PodmanReplicaRuntimeOptions options;
    // The server's --pull-timeout-seconds, from the plan; as the local executor's pulls get it.
    if (pull_timeout.count() > 0) options.podman.pull_timeout = pull_timeout;
    return std::unique_ptr<trainyard::executor::ReplicaRuntime>(
        std::make_unique<trainyard::container::PodmanReplicaRuntime>(std::move(options)));
  });
#else
  return trainyard::slurm::SlurmTaskMain(argc, argv);
#endif
}
