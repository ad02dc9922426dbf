// tuning_bench: median simple regret after 20/40/80 trials over 10 seeds, random search vs the
// Bayesian searcher (sequential and with 4 parallel trials), on Branin (2-D) and Hartmann-6.
// Trials run through StudyRunner with a simulated launcher: a parallel study finishes its
// oldest running trial, then starts the next one with the others still pending (as a real
// executor would). Prints a table and one JSON line.
//
//   build/bench/tuning_bench [--seeds=10] [--trials=80] [--random-trials=1000]
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <deque>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tuning/study_runner.h"
#include "tuning/study_spec.h"

namespace ty = trainyard::tuning;

namespace {

struct Problem {
  std::string name;
  ty::StudySpec spec;
  double optimum;
  std::function<double(const ty::ParameterSet&)> f;
};

double Get(const ty::ParameterSet& p, const std::string& id) {
  return std::get<double>(*ty::FindParameter(p, id));
}

ty::ParameterSpec Double(const std::string& id, double lo, double hi) {
  ty::ParameterSpec s;
  s.parameter_id = id;
  s.type = ty::ParameterType::kDouble;
  s.min_value = lo;
  s.max_value = hi;
  s.scale_type = ty::ScaleType::kLinear;
  return s;
}

Problem Branin() {
  Problem p;
  p.name = "branin";
  p.spec.metrics = {{"value", ty::Goal::kMinimize}};
  p.spec.parameters = {Double("x1", -5, 10), Double("x2", 0, 15)};
  p.optimum = 0.397887357729738;
  p.f = [](const ty::ParameterSet& s) {
    const double x1 = Get(s, "x1"), x2 = Get(s, "x2");
    const double b = 5.1 / (4 * M_PI * M_PI), c = 5 / M_PI, t = 1 / (8 * M_PI);
    return std::pow(x2 - b * x1 * x1 + c * x1 - 6, 2) + 10 * (1 - t) * std::cos(x1) + 10;
  };
  return p;
}

Problem Hartmann6() {
  Problem p;
  p.name = "hartmann6";
  p.spec.metrics = {{"value", ty::Goal::kMinimize}};
  for (int i = 1; i <= 6; ++i) p.spec.parameters.push_back(Double("x" + std::to_string(i), 0, 1));
  p.optimum = -3.32236801141551;
  p.f = [](const ty::ParameterSet& s) {
    static const double alpha[4] = {1.0, 1.2, 3.0, 3.2};
    static const double a[4][6] = {{10, 3, 17, 3.5, 1.7, 8},
                                   {0.05, 10, 17, 0.1, 8, 14},
                                   {3, 3.5, 1.7, 10, 17, 8},
                                   {17, 8, 0.05, 10, 0.1, 14}};
    static const double pm[4][6] = {{0.1312, 0.1696, 0.5569, 0.0124, 0.8283, 0.5886},
                                    {0.2329, 0.4135, 0.8307, 0.3736, 0.1004, 0.9991},
                                    {0.2348, 0.1451, 0.3522, 0.2883, 0.3047, 0.6650},
                                    {0.4047, 0.8828, 0.8732, 0.5743, 0.1091, 0.0381}};
    double x[6];
    for (int i = 0; i < 6; ++i) x[i] = Get(s, "x" + std::to_string(i + 1));
    double total = 0;
    for (int i = 0; i < 4; ++i) {
      double inner = 0;
      for (int j = 0; j < 6; ++j) inner += a[i][j] * (x[j] - pm[i][j]) * (x[j] - pm[i][j]);
      total -= alpha[i] * std::exp(-inner);
    }
    return total;
  };
  return p;
}

// Plays the executor: runs the oldest running trial to completion (one final measurement),
// so a parallel study always has the other trials pending when it proposes the next one.
class SimulatedLauncher : public ty::TrialLauncher {
 public:
  trainyard::Status StartTrial(const ty::Trial& trial, const ty::TrialLaunch&) override {
    running.push_back(trial.id);
    return trainyard::Status::Ok();
  }
  void StopTrial(const std::string&) override {}
  std::deque<std::string> running;
};

void Check(const trainyard::Status& s) {
  if (!s.ok()) {
    std::fprintf(stderr, "tuning_bench: %s\n", s.ToString().c_str());
    std::exit(1);
  }
}

// Best-so-far objective after each trial (minimisation), `trials` long.
std::vector<double> Run(const Problem& problem, ty::Algorithm algorithm, int parallel, int trials,
                        uint64_t seed) {
  ty::HyperparameterTuningJobSpec job;
  job.display_name = problem.name;
  job.study_spec = problem.spec;
  job.study_spec.algorithm = algorithm;
  job.max_trial_count = trials;
  job.parallel_trial_count = parallel;
  SimulatedLauncher launcher;
  ty::StudyRunnerOptions options;
  options.seed = seed;
  auto runner = ty::StudyRunner::Create(job, &launcher, options);
  Check(runner.status());
  Check((*runner)->Pump());
  std::vector<double> best_so_far;
  double best = 1e300;
  while (!launcher.running.empty()) {
    const std::string id = launcher.running.front();
    launcher.running.pop_front();
    const ty::Trial& trial = (*runner)->trials()[std::stoul(id) - 1];
    const double v = problem.f(trial.parameters);
    ty::Measurement m;
    m.step_count = 1;
    m.metrics = {{"value", v}};
    Check((*runner)->UpdateMeasurements(id, {m}));
    Check((*runner)->OnTrialEnded(id, {true, ""}));
    best = std::min(best, v);
    best_so_far.push_back(best);
  }
  return best_so_far;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int FlagInt(int argc, char** argv, const char* name, int fallback) {
  const size_t len = std::strlen(name);
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], name, len) == 0 && argv[i][len] == '=')
      return std::atoi(argv[i] + len + 1);
  }
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const int seeds = FlagInt(argc, argv, "--seeds", 10);
  const int trials = FlagInt(argc, argv, "--trials", 80);
  const int random_trials = FlagInt(argc, argv, "--random-trials", 1000);
  struct Config {
    std::string name;
    ty::Algorithm algorithm;
    int parallel;
    int trials;
  };
  const std::vector<Config> configs = {
      {"random", ty::Algorithm::kRandomSearch, 1, std::max(trials, random_trials)},
      {"bayesian", ty::Algorithm::kUnspecified, 1, trials},
      {"bayesian-p4", ty::Algorithm::kUnspecified, 4, trials}};
  const std::array<int, 3> checkpoints = {20, 40, 80};
  nlohmann::json results = nlohmann::json::object();
  std::printf("%-10s %-12s %12s %12s %12s %14s %9s %9s\n", "problem", "searcher", "regret@20",
              "regret@40", "regret@80", "trials-to-1%", "wall s", "cpu s");
  for (const Problem& problem : {Branin(), Hartmann6()}) {
    for (const Config& c : configs) {
      const auto t0 = std::chrono::steady_clock::now();
      const std::clock_t c0 = std::clock();
      std::vector<std::vector<double>> curves;
      for (int s = 0; s < seeds; ++s)
        curves.push_back(Run(problem, c.algorithm, c.parallel, c.trials, 1000 + s));
      const double cpu_secs = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
      const double secs =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      nlohmann::json row;
      std::string line;
      for (int k : checkpoints) {
        std::vector<double> regrets;
        for (const auto& curve : curves) {
          regrets.push_back(curve[std::min<size_t>(curve.size(), k) - 1] - problem.optimum);
        }
        row["regret@" + std::to_string(k)] = Median(regrets);
      }
      // Trials to reach within 1% of the optimum (|optimum| * 0.01); trials+1 when never.
      std::vector<double> reach;
      for (const auto& curve : curves) {
        size_t i = 0;
        while (i < curve.size() && curve[i] - problem.optimum > 0.01 * std::fabs(problem.optimum))
          ++i;
        reach.push_back(i < curve.size() ? static_cast<double>(i + 1)
                                         : static_cast<double>(curve.size() + 1));
      }
      const double med_reach = Median(reach);
      row["trialsTo1pct"] = med_reach;
      row["trialsRun"] = c.trials;
      row["seconds"] = secs;
      row["cpuSeconds"] = cpu_secs;
      results[problem.name][c.name] = row;
      char reach_text[32];
      if (med_reach > c.trials) {
        std::snprintf(reach_text, sizeof(reach_text), ">%d", c.trials);
      } else {
        std::snprintf(reach_text, sizeof(reach_text), "%.1f", med_reach);
      }
      std::printf("%-10s %-12s %12.5f %12.5f %12.5f %14s %9.1f %9.1f\n", problem.name.c_str(),
                  c.name.c_str(), row["regret@20"].get<double>(), row["regret@40"].get<double>(),
                  row["regret@80"].get<double>(), reach_text, secs, cpu_secs);
      std::fflush(stdout);
    }
  }
  nlohmann::json out = {{"bench", "tuning"}, {"seeds", seeds}, {"results", results}};
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
