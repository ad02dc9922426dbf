#include "train/batch_builder.h"

#include <algorithm>

namespace trainyard::train {

BatchBuilder::BatchBuilder(int64_t max_batch, int64_t max_length, int32_t pad_id,
                           torch::Device device)
    : max_batch_(max_batch), max_length_(max_length), pad_id_(pad_id), device_(device) {
  // Pinned host memory makes the host-to-device copy of each batch a plain DMA.
  auto options = torch::TensorOptions().dtype(torch::kLong).pinned_memory(device.is_cuda());
  ids_ = torch::empty({max_batch * max_length}, options);
  mask_ = torch::empty({max_batch * max_length}, options);
  types_ = torch::empty({max_batch * max_length}, options);
  labels_ = torch::empty({max_batch}, options);
}

Batch BatchBuilder::Build(const TokenizedSet& data, const std::vector<int32_t>& indices,
                          int64_t pad_to) {
  const int64_t b = static_cast<int64_t>(indices.size());
  int64_t t = pad_to;
  if (t <= 0) {
    t = 1;
    for (int32_t i : indices) t = std::max<int64_t>(t, data.length(i));
  }
  int64_t* ids = ids_.data_ptr<int64_t>();
  int64_t* mask = mask_.data_ptr<int64_t>();
  int64_t* types = types_.data_ptr<int64_t>();
  int64_t* labels = labels_.data_ptr<int64_t>();
  Batch batch;
  for (int64_t row = 0; row < b; ++row) {
    const size_t example = static_cast<size_t>(indices[row]);
    const int64_t len = std::min<int64_t>(data.length(example), t);
    const int32_t* src_ids = data.ids(example);
    const int32_t* src_types = data.type_ids(example);
    int64_t* dst_ids = ids + row * t;
    int64_t* dst_mask = mask + row * t;
    int64_t* dst_types = types + row * t;
    for (int64_t j = 0; j < len; ++j) {
      dst_ids[j] = src_ids[j];
      dst_types[j] = src_types[j];
      dst_mask[j] = 1;
    }
    std::fill(dst_ids + len, dst_ids + t, static_cast<int64_t>(pad_id_));
    std::fill(dst_types + len, dst_types + t, 0);
    std::fill(dst_mask + len, dst_mask + t, 0);
    labels[row] = data.labels().empty() ? 0 : data.labels()[example];
    batch.real_tokens += len;
  }
  auto view = [&](const torch::Tensor& buffer) {
    torch::Tensor v = buffer.narrow(0, 0, b * t).view({b, t});
    return device_.is_cpu() ? v : v.to(device_);
  };
  batch.input_ids = view(ids_);
  batch.attention_mask = view(mask_);
  batch.token_type_ids = view(types_);
  batch.labels = device_.is_cpu() ? labels_.narrow(0, 0, b) : labels_.narrow(0, 0, b).to(device_);
  batch.size = b;
  batch.length = t;
  return batch;
}

}  // namespace trainyard::train
