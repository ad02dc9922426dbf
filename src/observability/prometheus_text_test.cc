#include "observability/prometheus_text.h"

#include <gtest/gtest.h>

#include <cmath>

namespace trainyard::observability {
namespace {

TEST(PrometheusTextTest, WritesFamiliesSamplesAndHistograms) {
  PrometheusText t;
  t.Family("x_total", "counter", "Things.\nCounted.");
  t.Sample("x_total", {{"route", "/a\"b\\c\nd"}, {"code", "200"}}, 3);
  t.Sample("x_total", {}, 0.25);
  Histogram h({1, 5});
  h.Observe(0.5);
  h.Observe(3);
  h.Observe(30);
  t.Family("lat_seconds", "histogram", "Latency.");
  t.HistogramSamples("lat_seconds", {}, h);
  EXPECT_EQ(t.text(),
            "# HELP x_total Things. Counted.\n"
            "# TYPE x_total counter\n"
            "x_total{route=\"/a\\\"b\\\\c\\nd\",code=\"200\"} 3\n"
            "x_total 0.25\n"
            "# HELP lat_seconds Latency.\n"
            "# TYPE lat_seconds histogram\n"
            "lat_seconds_bucket{le=\"1\"} 1\n"
            "lat_seconds_bucket{le=\"5\"} 2\n"
            "lat_seconds_bucket{le=\"+Inf\"} 3\n"
            "lat_seconds_sum 33.5\n"
            "lat_seconds_count 3\n");
}

TEST(PrometheusTextTest, SpecialValues) {
  EXPECT_EQ(PrometheusText::FormatValue(NAN) + " " + PrometheusText::FormatValue(-INFINITY) + " " +
                PrometheusText::FormatValue(1e300),
            "NaN -Inf 1.0000000000000001e+300");
}

}  // namespace
}  // namespace trainyard::observability
