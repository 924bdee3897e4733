// consumer.cpp -- the C++ side of the install check: <jaxc.h> must compile as C++ with
// every warning on, and its symbols must link with C linkage.
#include <jaxc.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

int main() {
  const int64_t shape[1] = {4};
  jx_scope_begin();
  jx_array *x = jx_arange(0.0, 4.0, 1.0, JX_FLOAT32);      // [0 1 2 3]
  jx_array *y = jx_mul(x, jx_ones(1, shape, JX_FLOAT32));
  double v = jx_item(jx_sum(y, 0, nullptr, false));         // 6
  jx_scope_end(0, nullptr);
  if (jx_last_status() != JX_OK) {
    std::fprintf(stderr, "consumer.cpp: %s\n", jx_last_error());
    return 1;
  }
  std::printf("consumer.cpp: sum = %g, dtype = %s, live arrays = %lld\n", v,
              jx_dtype_name(JX_FLOAT32), static_cast<long long>(jx_live_arrays()));
  return (std::fabs(v - 6.0) <= 1e-6 && jx_live_arrays() == 0) ? 0 : 1;
}
