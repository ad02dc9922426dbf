#include "batch_prediction/shard_runner.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>

#include "batch_prediction/instance_reader.h"
#include "common/file_util.h"

namespace trainyard::batch_prediction {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// A file written under a temporary name, renamed into place by Commit().
class ShardFile {
 public:
  explicit ShardFile(fs::path path) : path_(std::move(path)) {
    tmp_ = path_.parent_path() / ("." + path_.filename().string() + ".partial");
  }
  ~ShardFile() {
    if (f_) std::fclose(f_);
    if (!committed_) {
      std::error_code ec;
      fs::remove(tmp_, ec);
    }
  }
  Status Open() {
    f_ = std::fopen(tmp_.c_str(), "we");
    if (!f_) return UnavailableError("cannot write " + tmp_.string() + ": " + std::strerror(errno));
    return Status::Ok();
  }
  Status Line(const json& j) {
    ++lines_;
    const std::string s = j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    if (std::fwrite(s.data(), 1, s.size(), f_) != s.size()) {
      return UnavailableError("cannot write " + tmp_.string() + ": " + std::strerror(errno));
    }
    return Status::Ok();
  }
  int64_t lines() const { return lines_; }
  Status Commit() {
    if (std::fflush(f_) != 0 || ::fsync(fileno(f_)) != 0 || std::fclose(f_) != 0) {
      f_ = nullptr;
      return UnavailableError("cannot write " + tmp_.string() + ": " + std::strerror(errno));
    }
    f_ = nullptr;
    std::error_code ec;
    fs::rename(tmp_, path_, ec);
    if (ec) return UnavailableError("cannot rename " + tmp_.string() + ": " + ec.message());
    committed_ = true;
    return Status::Ok();
  }

 private:
  fs::path path_, tmp_;
  std::FILE* f_ = nullptr;
  int64_t lines_ = 0;
  bool committed_ = false;
};

json OutputLine(const Instance& in, const char* field, json value) {
  json line = json::object();
  line[in.keyed ? "key" : "instance"] = in.echo;
  line[field] = std::move(value);
  return line;
}

class Run {
 public:
  Run(const ShardOptions& o, Predictor& p)
      : o_(o),
        predictor_(p),
        results_(o.output_dir / spec::ResultsFileName(o.shard, o.shards)),
        errors_(o.output_dir / spec::ErrorsFileName(o.shard, o.shards)) {}

  StatusOr<ShardCounts> Go() {
    TY_RETURN_IF_ERROR(MakeDirs(o_.output_dir));
    TY_RETURN_IF_ERROR(results_.Open());
    TY_RETURN_IF_ERROR(errors_.Open());
    TY_RETURN_IF_ERROR(ReadAll());
    TY_RETURN_IF_ERROR(Flush());
    TY_RETURN_IF_ERROR(results_.Commit());
    if (counts_.failed > 0) TY_RETURN_IF_ERROR(errors_.Commit());
    TY_RETURN_IF_ERROR(Progress(true));
    return counts_;
  }

 private:
  bool Mine(int64_t index) const { return index % o_.shards == o_.shard; }

  Status ReadAll() {
    std::vector<std::string> contents;
    ReadSettings count{o_.format, o_.instance_config, [](int64_t) { return false; }};
    int64_t index = 0;
    for (const std::string& uri : o_.inputs) {
      TY_ASSIGN_OR_RETURN(std::string content, o_.read(uri));
      TY_RETURN_IF_ERROR(
          ForEachInstance(content, uri, count, &index, [](Instance&&) { return Status::Ok(); }));
      contents.push_back(std::move(content));
    }
    counts_.total = index / o_.shards + (index % o_.shards > o_.shard ? 1 : 0);
    TY_RETURN_IF_ERROR(Progress(false));
    ReadSettings read{o_.format, o_.instance_config, [this](int64_t i) { return Mine(i); }};
    index = 0;
    for (size_t f = 0; f < contents.size(); ++f) {
      TY_RETURN_IF_ERROR(ForEachInstance(contents[f], o_.inputs[f], read, &index,
                                         [this](Instance&& in) { return Take(std::move(in)); }));
      contents[f].clear();
      contents[f].shrink_to_fit();
    }
    return Status::Ok();
  }

  Status Take(Instance&& in) {
    if (!in.error.empty()) {
      ++counts_.failed;
      return errors_.Line(OutputLine(in, "error", ErrorJson(InvalidArgumentError(in.error))));
    }
    batch_.push_back(std::move(in));
    if (batch_.size() >= static_cast<size_t>(o_.batch_size)) return Flush();
    return Status::Ok();
  }

  Status Flush() {
    if (batch_.empty()) return Status::Ok();
    std::vector<json> inputs;
    inputs.reserve(batch_.size());
    for (const Instance& in : batch_) inputs.push_back(in.input);
    TY_ASSIGN_OR_RETURN(auto outcomes, predictor_.Predict(inputs, o_.parameters));
    if (outcomes.size() != batch_.size()) {
      return InternalError("the model answered " + std::to_string(outcomes.size()) +
                           " predictions for " + std::to_string(batch_.size()) + " instances");
    }
    for (size_t i = 0; i < batch_.size(); ++i) {
      if (outcomes[i].ok()) {
        ++counts_.successful;
        TY_RETURN_IF_ERROR(results_.Line(OutputLine(batch_[i], "prediction", *outcomes[i])));
      } else {
        ++counts_.failed;
        TY_RETURN_IF_ERROR(
            errors_.Line(OutputLine(batch_[i], "error", ErrorJson(outcomes[i].status()))));
      }
    }
    batch_.clear();
    return Progress(false);
  }

  Status Progress(bool done) {
    if (o_.progress_file.empty()) return Status::Ok();
    const auto now = std::chrono::steady_clock::now();
    if (!done && now - last_progress_ < std::chrono::seconds(1)) return Status::Ok();
    last_progress_ = now;
    const json p = {{"total", counts_.total},
                    {"successful", counts_.successful},
                    {"failed", counts_.failed},
                    {"done", done}};
    return ReplaceFile(o_.progress_file, p.dump() + "\n");
  }

  const ShardOptions& o_;
  Predictor& predictor_;
  ShardFile results_, errors_;
  std::vector<Instance> batch_;
  ShardCounts counts_;
  std::chrono::steady_clock::time_point last_progress_{};
};

}  // namespace

json ErrorJson(const Status& status) {
  return {{"code", static_cast<int>(status.code())}, {"message", status.message()}};
}

StatusOr<ShardCounts> RunShard(const ShardOptions& options, Predictor& predictor) {
  if (options.shards < 1 || options.shard < 0 || options.shard >= options.shards) {
    return InvalidArgumentError("shard " + std::to_string(options.shard) + " of " +
                                std::to_string(options.shards) + " is not a shard");
  }
  if (options.batch_size < 1) return InvalidArgumentError("batch size must be >= 1");
  if (options.progress_file.has_parent_path()) {
    TY_RETURN_IF_ERROR(MakeDirs(options.progress_file.parent_path()));
  }
  Run run(options, predictor);
  return run.Go();
}

}  // namespace trainyard::batch_prediction
