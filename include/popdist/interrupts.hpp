#pragma once
/// @file interrupts.hpp
/// Interruptible waits. While popdist waits (a barrier whose other members have not come), it
/// calls a process-wide check about every 50 ms; the check may throw to abandon the wait. The
/// Python module installs one that runs Python's signal handlers, so that Ctrl-C in a blocking
/// call raises KeyboardInterrupt within ~50 ms instead of when (or if) the others arrive. A C++
/// program needs none: SIGINT's default action ends the process at once. An abandoned wait leaves
/// its barrier out of step, so the job should end (an uncaught exception does).

namespace popdist {

/// The check popdist's waits call; nullptr (the default) for none.
using InterruptCheck = void (*)();

/// Installs `check` for every later wait (process-wide).
void set_interrupt_check(InterruptCheck check) noexcept;

}  // namespace popdist
