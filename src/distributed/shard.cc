#include "distributed/shard.h"

#include <algorithm>
#include <string>

namespace trainyard::distributed {

StatusOr<std::vector<int64_t>> ShardIndices(const std::vector<int64_t>& permutation, int rank,
                                            int world) {
  if (world < 1) {
    return InvalidArgumentError("world size must be >= 1, got " + std::to_string(world));
  }
  if (rank < 0 || rank >= world) {
    return InvalidArgumentError("rank must be in [0, " + std::to_string(world) + "), got " +
                                std::to_string(rank));
  }
  const int64_t n = static_cast<int64_t>(permutation.size());
  std::vector<int64_t> shard;
  if (n == 0) return shard;
  const int64_t per_rank = (n + world - 1) / world;
  shard.reserve(per_rank);
  for (int64_t i = 0; i < per_rank; ++i) {
    // Position in the padded sequence; positions >= n wrap to the start (repeatedly if the
    // world is larger than the data, as torch's DistributedSampler does).
    shard.push_back(permutation[(i * world + rank) % n]);
  }
  return shard;
}

int64_t ConsumedPositions(int64_t permutation_size, int64_t steps, int64_t per_rank_batch,
                          int world) {
  if (permutation_size <= 0 || world < 1) return 0;
  const int64_t padded = (permutation_size + world - 1) / world * world;
  return std::min(padded, steps * per_rank_batch * world);
}

StatusOr<std::vector<int64_t>> ShardRemaining(const std::vector<int64_t>& permutation,
                                              int64_t consumed, int rank, int world) {
  if (consumed < 0) {
    return InvalidArgumentError("consumed sample position must be >= 0, got " +
                                std::to_string(consumed));
  }
  const int64_t n = static_cast<int64_t>(permutation.size());
  std::vector<int64_t> rest(permutation.begin() + std::min(consumed, n), permutation.end());
  return ShardIndices(rest, rank, world);
}

}  // namespace trainyard::distributed
