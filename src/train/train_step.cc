#include "train/train_step.h"

#include "train/autocast.h"

namespace trainyard::train {

StatusOr<TrainStepOutput> TrainStep(model::BertForSequenceClassification& model, AdamW& optimizer,
                                    DataParallel& dp, const Batch& batch, double lr,
                                    uint64_t dropout_seed, bool bf16) {
  torch::manual_seed(dropout_seed);
  TrainStepOutput out;
  {
    AutocastScope autocast(bf16, batch.input_ids.device());
    // input_ids, attention_mask, token_type_ids: (B, T) -> (B, C)
    out.logits = model->forward(batch.input_ids, batch.attention_mask, batch.token_type_ids);
  }
  out.logits = out.logits.to(torch::kFloat);                                  // (B, C)
  out.loss = torch::nn::functional::cross_entropy(out.logits, batch.labels);  // ()
  optimizer.ZeroGrad();
  dp.BeginStep();  // arms the all-reduce hooks: each gradient bucket is sent as soon as it is ready
  out.loss.backward();
  TY_RETURN_IF_ERROR(dp.FinishStep());  // .grad = mean over replicas
  optimizer.Step(lr);
  TY_RETURN_IF_ERROR(dp.CheckReplicas(model->named_parameters()));
  return out;
}

}  // namespace trainyard::train
