// WorkerSession::run of every operation of AllOps, instantiated where the operations' wire forms
// are known (worker_run.h).
#include "worker_op_wire.h"
#include "worker_run.h"

namespace mlens {

template struct WorkerRunInstances<AllOps>;

}  // namespace mlens
