#include "counter_test_support.h"

#include <algorithm>

#include "metric_catalogue.h"

namespace gemm::test {

CounterCollector& test_collector() {
  static CounterCollector c = [] {
    CounterCollector made;
    made.start(device(), true, "", {});
    return made;
  }();
  return c;
}

CounterValues measure(const Variant& v, const GemmShape& s) {
  TestData& data = test_data(v.precision, s);
  const Operands ops = operands_for(v, data);
  CounterValues values = test_collector().collect([&] { v.run(ops, test_stream()); });
  const CounterValues facts = launch_facts(v, s, device().limits);
  values.insert(facts.begin(), facts.end());
  add_derived_metrics(values);
  return values;
}

CounterValues measure(const std::string& variant, Precision p, const GemmShape& s) {
  return measure(find_variant(variant, p), s);
}

std::optional<CounterValues> measure_if_accepted(const std::string& variant, Precision p,
                                                 const GemmShape& s, std::string& refused) {
  const Variant& v = find_variant(variant, p);
  if (auto why = check_launch(v, s, device().limits)) {
    refused = *why;
    return std::nullopt;
  }
  return measure(v, s);
}

void expect_count(double measured, double predicted, const std::string& what) {
  EXPECT_NEAR(measured, predicted, 1e-6 * std::max(1.0, predicted)) << what;
}

}  // namespace gemm::test
