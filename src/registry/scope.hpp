#pragma once
// The scope stack of execute_on_instances: a bare synchronize() (and nested calls) on this
// thread use the innermost enclosing set. Thread-local: two threads running different
// execute_on_instances bodies do not see each other's scope.

#include "registry/entry.hpp"

namespace popdist::detail {

struct Entry;

/// The innermost scope of this thread (hence not in the process state: execute_on_instances'
/// scopes are per thread); each ScopeGuard remembers the one it replaced, so the stack lives in
/// the guards on the call stack. A plain pointer keeps the thread-local trivial (no initialization
/// guard), and inline so that synchronize() reads it without a call.
inline thread_local Entry* t_innermost_scope = nullptr;

/// What a call without participants or id means: the innermost scope, else all instances (the
/// root scope; nullptr before init()). The one place that decides it; inline and without a lock
/// because synchronize()'s hot path asks it on every call.
[[nodiscard]] inline Entry* current_entry() noexcept {
  if (auto* scope = t_innermost_scope) return scope;
  return g_root_scope_copy.load(std::memory_order_relaxed);
}

/// Pushes a scope for its lifetime (pops it even when the body throws).
class ScopeGuard {
 public:
  explicit ScopeGuard(Entry& entry) : previous_(t_innermost_scope) { t_innermost_scope = &entry; }
  ~ScopeGuard() { t_innermost_scope = previous_; }
  ScopeGuard(const ScopeGuard&) = delete;
  ScopeGuard& operator=(const ScopeGuard&) = delete;
  ScopeGuard(ScopeGuard&&) = delete;
  ScopeGuard& operator=(ScopeGuard&&) = delete;

 private:
  Entry* previous_;
};

}  // namespace popdist::detail
