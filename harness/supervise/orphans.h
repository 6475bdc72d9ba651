// Where an orphan goes. forkcheck is a child subreaper: the kernel re-parents to it every process
// of a tree whose parent ended. Each goes to the tree that claims it (seen in it before, or
// started with its token). One that no tree claims (it left without a token, between two looks)
// goes to the only tree running; with several trees, or when it is of an earlier job of this run
// (started with the run's token, of no tree running), it is a stray, killed when the run ends. A
// child in forkcheck's own process group is not taken for a tree's orphan (every tree's root leads
// a group of its own) unless every child of forkcheck's is a tree's (claim_every_child: forkcheck
// itself); in a program that embeds the supervisor it may be a child of the program's own.
#pragma once

#include <cstddef>
#include <functional>

namespace fc::harness {

enum class OrphanGoesTo { kClaimingTree, kOnlyTree, kNotOurs, kStray };

// `of_an_earlier_job` is asked only when the answer matters (it reads the orphan's environment).
inline OrphanGoesTo where_orphan_goes(bool claimed, bool in_our_group, bool claim_every_child,
                                      size_t trees_running,
                                      const std::function<bool()>& of_an_earlier_job) {
  if (claimed) return OrphanGoesTo::kClaimingTree;
  if (in_our_group && !claim_every_child) return OrphanGoesTo::kNotOurs;
  if (trees_running == 1 && !of_an_earlier_job()) return OrphanGoesTo::kOnlyTree;
  return OrphanGoesTo::kStray;
}

}  // namespace fc::harness
