// One optimizer step of (data-parallel) fine-tuning, in one place, as llm.c writes it:
//
//   logits = model(batch)                  (B, C)   forward, bf16 autocast on CUDA if asked
//   loss   = cross_entropy(logits, labels) ()       mean over this replica's B examples
//   loss.backward()                                 .grad of every trainable parameter
//   all-reduce(.grad) / world size                  DataParallel::FinishStep (no-op alone)
//   AdamW step with learning rate `lr`              parameters updated in place
//
// The trainer (trainer.cc) builds the batch, calls TrainStep and hands the result to its
// observers (train_observers.h); train_step_parity_test.cc runs it against a PyTorch reference.
#pragma once

#include <torch/torch.h>

#include <cstdint>

#include "common/status.h"
#include "model/bert.h"
#include "train/adamw.h"
#include "train/batch_builder.h"
#include "train/data_parallel.h"

namespace trainyard::train {

struct TrainStepOutput {
  torch::Tensor logits;  // (B, C) float32, from before the update
  torch::Tensor loss;    // () float32, this replica's mean loss
};

// Runs one step on `batch` (this replica's shard). `dropout_seed` seeds the dropout masks of this
// step (the trainer derives it from seed, global step and rank, so a resumed run draws what an
// uninterrupted one would). After OK, .grad holds the step's averaged gradients and the
// parameters are updated. Errors: what DataParallel returns for a dead or hung peer, or a replica
// that diverged (check_replicas); LibTorch exceptions propagate (the trainer converts them).
StatusOr<TrainStepOutput> TrainStep(model::BertForSequenceClassification& model, AdamW& optimizer,
                                    DataParallel& dp, const Batch& batch, double lr,
                                    uint64_t dropout_seed, bool bf16);

}  // namespace trainyard::train
