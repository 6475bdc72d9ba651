// What starting this program costs, in a figure that is the same however it was started: the
// shared libraries loaded before main() (the torch program loads 287 here, the native one 9).
// Loading and relocating them, and running their static initialisers, is what a start of the
// program costs (a quarter of a CPU-second for the torch program, next to nothing for the native
// one), and every spawned worker of it pays that again. The catalog carries the figure (`--list`:
// each case's "program_libraries"), and the harness starts the variants of the costliest program
// first. A count rather than a measured time: the catalog a zygote's copy lists must be the one an
// exec'd program lists.
#pragma once

#include <cstddef>

namespace fc {

// Called first thing in main(), before anything is loaded at run time: counts the libraries.
// A copy forked by the zygote keeps its zygote's count, which is what an exec'd program has.
void note_startup_cost();
// The count note_startup_cost() took; 0 if it was never called.
std::size_t startup_libraries();

}  // namespace fc
