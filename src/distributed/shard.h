// Which samples each rank trains on: DistributedSampler semantics over a global, per-epoch
// permutation that every rank computes identically (same seed, same epoch).
//
// Padding: the permutation is extended by wrapping around its start until its length is a
// multiple of the world size (so every rank takes the same number of steps and no collective
// waits for a rank that ran out of data); rank r then takes positions r, r+W, r+2W, ... Up to
// W-1 samples are therefore seen twice per epoch. With a per-rank batch b, global step k covers
// padded positions [k*b*W, (k+1)*b*W): exactly the batch a single process with batch b*W would
// take, which is why W workers x batch b reproduce 1 worker x batch b*W.
//
// Resume at any world size: the checkpoint stores the epoch's seed-derived permutation (or the
// seed and epoch to recompute it) and the number of global positions consumed; on restart each
// rank shards what is left (ShardRemaining) for the new world size.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"

namespace trainyard::distributed {

// Returns rank `rank`'s samples of `permutation` (padded as above), in training order.
// Every rank gets ceil(N / world) samples; an empty permutation gives an empty shard.
// INVALID_ARGUMENT when world < 1 or rank is outside [0, world).
StatusOr<std::vector<int64_t>> ShardIndices(const std::vector<int64_t>& permutation, int rank,
                                            int world);

// Global positions (of the padded sequence) consumed after `steps` steps of `per_rank_batch`
// samples on each of `world` ranks, capped at the epoch's padded length.
int64_t ConsumedPositions(int64_t permutation_size, int64_t steps, int64_t per_rank_batch,
                          int world);

// The shard of the samples not yet trained this epoch: permutation[consumed..N) re-padded and
// sharded for the (possibly different) new `world`. `consumed` >= N gives an empty shard.
StatusOr<std::vector<int64_t>> ShardRemaining(const std::vector<int64_t>& permutation,
                                              int64_t consumed, int rank, int world);

}  // namespace trainyard::distributed
