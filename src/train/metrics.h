// Classification metrics of one evaluation pass: loss, accuracy, macro-F1, per-class
// precision/recall/F1 and the confusion matrix (what the trainer prints and writes to
// metrics.json).
//
// Conventions follow scikit-learn's defaults so numbers can be checked against it: a class that
// is never predicted has precision 0 (zero_division=0), a class with no examples has recall 0,
// and macro-F1 averages over the classes that occur in the truth or the predictions.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace trainyard::train {

// counts[truth][predicted]. Not thread-safe.
class ConfusionMatrix {
 public:
  explicit ConfusionMatrix(int num_classes = 0);

  // Precondition: 0 <= truth, predicted < num_classes() (the trainer validates labels up front).
  void Add(int64_t truth, int64_t predicted, int64_t count = 1);
  void Merge(const ConfusionMatrix& other);

  int num_classes() const { return num_classes_; }
  int64_t at(int truth, int predicted) const { return counts_[truth * num_classes_ + predicted]; }
  int64_t total() const;
  int64_t correct() const;              // trace
  int64_t TruthCount(int c) const;      // row sum: examples of class c
  int64_t PredictedCount(int c) const;  // column sum

 private:
  int num_classes_;
  std::vector<int64_t> counts_;
};

struct ClassMetrics {
  std::string label;
  double precision = 0;
  double recall = 0;
  double f1 = 0;
  int64_t support = 0;  // examples whose truth is this class
};

struct EvalMetrics {
  int64_t examples = 0;
  double loss = 0;  // mean cross-entropy over the examples
  double accuracy = 0;
  double macro_f1 = 0;
  std::vector<ClassMetrics> per_class;  // indexed by class id
  ConfusionMatrix confusion;
};

// `loss_sum` is the sum of per-example losses; `labels` names the classes (size == classes).
EvalMetrics ComputeMetrics(const ConfusionMatrix& confusion, double loss_sum,
                           const std::vector<std::string>& labels);

// {"examples","loss","accuracy","macro_f1","per_class":[{label,precision,recall,f1,support}],
//  "confusion_matrix":[[...]] (rows = truth, columns = predicted)}
nlohmann::json MetricsToJson(const EvalMetrics& m);

// A multi-line human report: the headline numbers, a per-class table and the confusion matrix.
std::string FormatMetrics(const std::string& title, const EvalMetrics& m);

}  // namespace trainyard::train
