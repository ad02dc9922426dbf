#include "train/metrics.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace trainyard::train {

ConfusionMatrix::ConfusionMatrix(int num_classes)
    : num_classes_(num_classes), counts_(static_cast<size_t>(num_classes) * num_classes, 0) {}

void ConfusionMatrix::Add(int64_t truth, int64_t predicted, int64_t count) {
  counts_[truth * num_classes_ + predicted] += count;
}

void ConfusionMatrix::Merge(const ConfusionMatrix& other) {
  for (size_t i = 0; i < counts_.size() && i < other.counts_.size(); ++i) {
    counts_[i] += other.counts_[i];
  }
}

int64_t ConfusionMatrix::total() const {
  int64_t t = 0;
  for (int64_t c : counts_) t += c;
  return t;
}

int64_t ConfusionMatrix::correct() const {
  int64_t t = 0;
  for (int c = 0; c < num_classes_; ++c) t += at(c, c);
  return t;
}

int64_t ConfusionMatrix::TruthCount(int c) const {
  int64_t t = 0;
  for (int p = 0; p < num_classes_; ++p) t += at(c, p);
  return t;
}

int64_t ConfusionMatrix::PredictedCount(int c) const {
  int64_t t = 0;
  for (int r = 0; r < num_classes_; ++r) t += at(r, c);
  return t;
}

EvalMetrics ComputeMetrics(const ConfusionMatrix& confusion, double loss_sum,
                           const std::vector<std::string>& labels) {
  EvalMetrics m;
  m.confusion = confusion;
  m.examples = confusion.total();
  if (m.examples > 0) {
    m.loss = loss_sum / static_cast<double>(m.examples);
    m.accuracy = static_cast<double>(confusion.correct()) / static_cast<double>(m.examples);
  }
  double f1_sum = 0;
  int present = 0;
  for (int c = 0; c < confusion.num_classes(); ++c) {
    ClassMetrics cm;
    cm.label = c < static_cast<int>(labels.size()) ? labels[c] : std::to_string(c);
    const int64_t tp = confusion.at(c, c);
    const int64_t predicted = confusion.PredictedCount(c);
    cm.support = confusion.TruthCount(c);
    cm.precision = predicted > 0 ? static_cast<double>(tp) / predicted : 0.0;
    cm.recall = cm.support > 0 ? static_cast<double>(tp) / cm.support : 0.0;
    cm.f1 = cm.precision + cm.recall > 0 ? 2 * cm.precision * cm.recall / (cm.precision + cm.recall)
                                         : 0.0;
    if (cm.support > 0 || predicted > 0) {
      f1_sum += cm.f1;
      ++present;
    }
    m.per_class.push_back(std::move(cm));
  }
  m.macro_f1 = present > 0 ? f1_sum / present : 0.0;
  return m;
}

nlohmann::json MetricsToJson(const EvalMetrics& m) {
  nlohmann::json per_class = nlohmann::json::array();
  for (const auto& c : m.per_class) {
    per_class.push_back({{"label", c.label},
                         {"precision", c.precision},
                         {"recall", c.recall},
                         {"f1", c.f1},
                         {"support", c.support}});
  }
  nlohmann::json matrix = nlohmann::json::array();
  for (int r = 0; r < m.confusion.num_classes(); ++r) {
    nlohmann::json row = nlohmann::json::array();
    for (int p = 0; p < m.confusion.num_classes(); ++p) row.push_back(m.confusion.at(r, p));
    matrix.push_back(std::move(row));
  }
  return {{"examples", m.examples}, {"loss", m.loss},         {"accuracy", m.accuracy},
          {"macro_f1", m.macro_f1}, {"per_class", per_class}, {"confusion_matrix", matrix}};
}

std::string FormatMetrics(const std::string& title, const EvalMetrics& m) {
  std::ostringstream out;
  char line[256];
  std::snprintf(line, sizeof(line),
                "%s: examples %lld | loss %.4f | accuracy %.4f | macro-F1 %.4f\n", title.c_str(),
                static_cast<long long>(m.examples), m.loss, m.accuracy, m.macro_f1);
  out << line;
  size_t width = 5;
  for (const auto& c : m.per_class) width = std::max(width, c.label.size());
  const int w = static_cast<int>(std::min<size_t>(width, 24));
  std::snprintf(line, sizeof(line), "  %-*s %9s %9s %9s %9s\n", w, "class", "precision", "recall",
                "f1", "support");
  out << line;
  for (const auto& c : m.per_class) {
    std::snprintf(line, sizeof(line), "  %-*.*s %9.4f %9.4f %9.4f %9lld\n", w, w, c.label.c_str(),
                  c.precision, c.recall, c.f1, static_cast<long long>(c.support));
    out << line;
  }
  out << "  confusion matrix (rows = truth, columns = predicted):\n";
  for (int r = 0; r < m.confusion.num_classes(); ++r) {
    std::snprintf(line, sizeof(line), "  %-*.*s", w, w, m.per_class[r].label.c_str());
    out << line;
    for (int p = 0; p < m.confusion.num_classes(); ++p) {
      std::snprintf(line, sizeof(line), " %8lld", static_cast<long long>(m.confusion.at(r, p)));
      out << line;
    }
    out << "\n";
  }
  return out.str();
}

}  // namespace trainyard::train
