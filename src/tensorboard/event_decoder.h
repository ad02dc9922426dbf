// Scalars from one tensorflow.Event payload (TensorFlow's event.proto and summary.proto; field
// numbers below are the upstream ones):
//
//   Event        { double wall_time = 1; int64 step = 2; string file_version = 3;
//                  Summary summary = 5; ... }
//   Summary      { repeated Value value = 1; }
//   Value        { string tag = 1; float simple_value = 2; TensorProto tensor = 8;
//                  SummaryMetadata metadata = 9; ... }
//   SummaryMetadata { PluginData plugin_data = 1 { string plugin_name = 1; }; DataClass
//                  data_class = 4; }
//   TensorProto  { DataType dtype = 1; TensorShapeProto tensor_shape = 2; bytes tensor_content
//                  = 4; repeated float float_val = 5; repeated double double_val = 6; repeated
//                  int32 int_val = 7; repeated int64 int64_val = 10; repeated int32 half_val =
//                  13; ... }
//
// A value is a scalar when it has simple_value (TF1 / tensorboardX / trainyard-bert), or a
// one-element numeric tensor (TF2's tf.summary.scalar, PyTorch's SummaryWriter with new-style
// scalars) whose plugin is "scalars", whose data class is SCALAR, or that has no plugin at all.
// Histograms, images, text and other plugins' tensors are ignored.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace trainyard::tensorboard {

struct ScalarEvent {
  std::string tag;
  int64_t step = 0;
  double wall_time = 0;  // seconds since the epoch
  double value = 0;
};

// Appends the scalars of the serialized Event `payload` to `out` (none for events without a
// summary, e.g. the file_version header). INVALID_ARGUMENT for malformed protobuf; `out` is then
// unchanged.
Status DecodeEventScalars(std::string_view payload, std::vector<ScalarEvent>* out);

}  // namespace trainyard::tensorboard
