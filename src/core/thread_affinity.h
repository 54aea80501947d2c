// Helper threads (the staged path's progress thread, the crypto workers)
// must run beside the caller's thread, not take turns with it. Launchers
// often bind each rank to one core (Open MPI binds to a core for small jobs);
// a helper thread inherits that mask, and while the caller spins (in
// cudaStreamSynchronize, say) the helper runs only when the scheduler's tick
// preempts it: a ~4 ms floor per operation, measured on the H200 machine.
//
// GDR_HELPER_AFFINITY=auto (default): a helper thread whose inherited mask
// has a single CPU widens it to every CPU the process may use (the kernel
// keeps it inside the cgroup's cpuset) and says so once; inherit: leave it.
#pragma once

namespace gdr {

// Call at the start of a helper thread. `who` names it for the log.
void widenHelperAffinity(const char* who) noexcept;

}  // namespace gdr
