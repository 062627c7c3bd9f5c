// RUN: env PYFRONT_POOL_MAX_ELEMENTS=0 pyfront-opt %s --guard-fp-events | filecheck %s

/// PYFRONT_POOL_MAX_ELEMENTS=0 turns pooling off (passes/settings.py): the
/// small values of guard-fp-events.mlir's @pooled_rows each get a reduction
/// of their own, as before passes/pooled_checks.py, and no table is built.

// CHECK-LABEL: func.func @pooled_rows
// CHECK:         %[[E:[a-z0-9_]+]] = "pyfront.exp"
// CHECK-NEXT:    %[[F:[a-z0-9_]+]] = "pyfront.exp"
// CHECK-NOT:     "pyfront.update_slice"
// CHECK:         linalg.generic {{.*}} ins(%[[E]] : tensor<2x3xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[F]] : tensor<4xf32>)
// CHECK:         "pyfront.guard"({{.*}}) {kind = "fp-error", reason = "floating-point overflow in exp", site = "m.py:1:4"}
// CHECK-NEXT:    "pyfront.guard"({{.*}}) {kind = "fp-error", reason = "floating-point overflow in exp", site = "m.py:2:4"}
func.func @pooled_rows(%x: tensor<2x3xf32>, %y: tensor<4xf32>) -> (tensor<2x3xf32>, tensor<4xf32>) {
  %e = "pyfront.exp"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("m.py":1:4)
  %f = "pyfront.exp"(%y) : (tensor<4xf32>) -> tensor<4xf32> loc("m.py":2:4)
  return %e, %f : tensor<2x3xf32>, tensor<4xf32>
}
