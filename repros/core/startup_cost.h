// What this program's start-up cost: the CPU it spent before main() (loading its libraries and
// running their static initialisers: libtorch's take about a quarter of a CPU-second here, the
// native program's next to nothing). The catalog carries it (`--list`: each case's
// "program_startup_cpu_s"), and the harness starts the variants of the costliest program first:
// every spawned worker of it pays this again. Siblings: startup_cost_posix.cc (getrusage),
// startup_cost_win32.cc (GetProcessTimes).
#pragma once

namespace fc {

// Called first thing in main(): measures the CPU used so far, once. A copy forked by the zygote
// keeps its zygote's figure (it paid no start-up of its own, but an exec'd run of the program
// would).
void note_startup_cost();
// The figure note_startup_cost() took; 0 if it was never called.
double startup_cpu_s();

}  // namespace fc
