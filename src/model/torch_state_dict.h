// Reads a state_dict written by Python's torch.save without Python: the zip format of
// PyTorch >= 1.6 and the legacy format before it (2020-era HF pytorch_model.bin files, e.g. the
// original BERT miniatures, use it).
//
// Why not torch::pickle_load: LibTorch 1.13's unpickler cannot rebuild the collections.OrderedDict
// that nn.Module.state_dict() returns (it fails with "Expected GenericDict but got None"). This is
// a small pickle interpreter that understands exactly what a state_dict pickle contains —
// OrderedDict / dict, torch._utils._rebuild_tensor_v2 / _rebuild_parameter over typed storages
// referenced by persistent ids — and nothing else, so it never executes arbitrary globals: any
// other class in the pickle is an INVALID_ARGUMENT naming it. The zip container is read with
// caffe2::serialize::PyTorchStreamReader (part of LibTorch).
#pragma once

#include <torch/torch.h>

#include <filesystem>
#include <map>
#include <string>

#include "common/status.h"

namespace trainyard::model {

// Returns name -> tensor (CPU, contiguous, dtype as stored). NOT_FOUND if missing;
// INVALID_ARGUMENT "<path>: <problem>" for a corrupt or truncated file, a pickle that is not a
// flat {name: tensor} dict, or a tensor reaching outside its storage.
StatusOr<std::map<std::string, torch::Tensor>> ReadTorchStateDict(
    const std::filesystem::path& path);

}  // namespace trainyard::model
