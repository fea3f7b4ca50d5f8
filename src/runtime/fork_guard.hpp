#pragma once
// A fork() child of an instance is not a member of the job: it shares the parent's MPI state
// (sockets, shared memory, the communicators' handles) but MPI does not know it. Anything it did
// with them -- a barrier, MPI_Finalize or MPI_Abort in an exit handler -- would hang or break the
// job (a Python child that ends with sys.exit(0) would wait in MPI_Finalize forever). So from
// init() on, a fork handler marks the child: there popdist's MPI calls throw a UsageError saying
// so, init() refuses, finalize() and the exit handlers leave MPI alone, and the getters (which
// need no MPI) still answer.

namespace popdist::detail {

/// Installs the fork handler (once per process; called by init()).
void install_fork_guard() noexcept;

/// True in a child forked after init() (or in its children).
[[nodiscard]] bool in_forked_child() noexcept;

/// Throws UsageError "<function>: this process is a fork() child of instance I ..." naming
/// what to do instead.
[[noreturn]] void throw_forked_child(const char* function);

}  // namespace popdist::detail
