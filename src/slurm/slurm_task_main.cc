#include "slurm/slurm_task.h"

int main(int argc, char** argv) { return trainyard::slurm::SlurmTaskMain(argc, argv); }
