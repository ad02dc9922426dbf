#include "executor/exec_wrapper.h"

int main(int argc, char** argv) { return trainyard::executor::ExecWrapperMain(argc, argv); }
