// RUN: pyfront-opt %s --split-input-file --isolate-loop-scalars | filecheck %s

/// `c = c + labels[i]; t = t + x[i]` in a real loop: the int64 counter the
/// loop carries enters its body through an optimization barrier; the array it
/// carries does not.

// CHECK-LABEL: func.func @counter_and_sum
// CHECK:         scf.for %{{.*}} iter_args(%[[C:.*]] = %{{.*}}, %[[T:.*]] = %{{.*}})
// CHECK-NEXT:      %[[CUT:.*]] = util.optimization_barrier %[[C]] : tensor<i64>
// CHECK-NOT:       util.optimization_barrier
// CHECK:           linalg.generic {{.*}} ins(%[[CUT]], %{{.*}} : tensor<i64>, tensor<i64>)
// CHECK:           linalg.generic {{.*}} ins(%[[T]], %{{.*}} : tensor<4xf64>, tensor<4xf64>)
#scalar = affine_map<() -> ()>
#row = affine_map<(d0) -> (d0)>
func.func @counter_and_sum(%labels: tensor<300xi64>, %x: tensor<300x4xf64>, %c0: tensor<i64>, %t0: tensor<4xf64>) -> (tensor<i64>, tensor<4xf64>) {
  %lo = arith.constant 0 : index
  %hi = arith.constant 300 : index
  %one = arith.constant 1 : index
  %r:2 = scf.for %i = %lo to %hi step %one iter_args(%c = %c0, %t = %t0) -> (tensor<i64>, tensor<4xf64>) {
    %l1 = tensor.extract_slice %labels[%i] [1] [1] : tensor<300xi64> to tensor<1xi64>
    %l = tensor.collapse_shape %l1 [] : tensor<1xi64> into tensor<i64>
    %e = tensor.empty() : tensor<i64>
    %c2 = linalg.generic {indexing_maps = [#scalar, #scalar, #scalar], iterator_types = []} ins(%c, %l : tensor<i64>, tensor<i64>) outs(%e : tensor<i64>) {
    ^bb0(%a: i64, %b: i64, %o: i64):
      %s = arith.addi %a, %b : i64
      linalg.yield %s : i64
    } -> tensor<i64>
    %x1 = tensor.extract_slice %x[%i, 0] [1, 4] [1, 1] : tensor<300x4xf64> to tensor<1x4xf64>
    %xi = tensor.collapse_shape %x1 [[0, 1]] : tensor<1x4xf64> into tensor<4xf64>
    %e4 = tensor.empty() : tensor<4xf64>
    %t2 = linalg.generic {indexing_maps = [#row, #row, #row], iterator_types = ["parallel"]} ins(%t, %xi : tensor<4xf64>, tensor<4xf64>) outs(%e4 : tensor<4xf64>) {
    ^bb0(%a: f64, %b: f64, %o: f64):
      %s = arith.addf %a, %b : f64
      linalg.yield %s : f64
    } -> tensor<4xf64>
    scf.yield %c2, %t2 : tensor<i64>, tensor<4xf64>
  }
  return %r#0, %r#1 : tensor<i64>, tensor<4xf64>
}

// -----

/// A loop that carries no single-element value is left as it is.

// CHECK-LABEL: func.func @rows_only
// CHECK-NOT:     util.optimization_barrier
func.func @rows_only(%t0: tensor<4xf64>) -> tensor<4xf64> {
  %lo = arith.constant 0 : index
  %hi = arith.constant 3 : index
  %one = arith.constant 1 : index
  %r = scf.for %i = %lo to %hi step %one iter_args(%t = %t0) -> (tensor<4xf64>) {
    scf.yield %t : tensor<4xf64>
  }
  return %r : tensor<4xf64>
}
