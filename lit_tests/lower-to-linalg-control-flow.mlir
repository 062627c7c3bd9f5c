// RUN: pyfront-opt %s --split-input-file --lower-to-linalg | filecheck %s

/// pyfront ops inside both regions of an `scf.if` (a branch on a computed
/// value, relaxed after profiling saw both outcomes) are lowered in place:
/// each side keeps its own linalg.generic and yields it.

// CHECK-LABEL: func.func @if_regions
// CHECK-SAME:    (%[[C:.*]]: i1, %[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = scf.if %[[C]] -> (tensor<4xf32>) {
// CHECK:           %[[T:.*]] = linalg.generic
// CHECK-SAME:        ins(%[[X]] : tensor<4xf32>)
// CHECK:             math.tanh
// CHECK:           scf.yield %[[T]] : tensor<4xf32>
// CHECK:         } else {
// CHECK:           %[[E:.*]] = linalg.generic
// CHECK-SAME:        ins(%[[X]], %[[X]] : tensor<4xf32>, tensor<4xf32>)
// CHECK:             arith.mulf
// CHECK:           scf.yield %[[E]] : tensor<4xf32>
// CHECK:         }
// CHECK:         return %[[R]]
// CHECK-NOT:     pyfront.
func.func @if_regions(%c: i1, %x: tensor<4xf32>) -> tensor<4xf32> {
  %r = scf.if %c -> (tensor<4xf32>) {
    %t = "pyfront.tanh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %t : tensor<4xf32>
  } else {
    %e = "pyfront.multiply"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    scf.yield %e : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

/// `while h.sum() > t: h = h * 0.5`: the condition region (a reduction, in
/// float64 and rounded, and a comparison) and the body region of `scf.while` are both lowered; the loop
/// still carries the tensor.

// CHECK-LABEL: func.func @while_regions
// CHECK-SAME:    (%[[H0:.*]]: tensor<4xf32>, %[[T:.*]]: tensor<f32>, %[[HALF:.*]]: tensor<f32>)
// CHECK:         %[[OUT:.*]] = scf.while (%[[H:.*]] = %[[H0]]) : (tensor<4xf32>) -> tensor<4xf32> {
// CHECK:           %[[ACC:.*]]:2 = linalg.generic
// CHECK-SAME:        iterator_types = ["reduction"]
// CHECK-SAME:        ins(%[[H]] : tensor<4xf32>)
// CHECK:           %[[S:.*]] = linalg.generic
// CHECK-SAME:        ins(%[[ACC]]#0, %[[ACC]]#1 : tensor<f64>, tensor<f64>)
// CHECK:             arith.truncf
// CHECK:           %[[GT:.*]] = linalg.generic
// CHECK-SAME:        ins(%[[S]], %[[T]] : tensor<f32>, tensor<f32>)
// CHECK:             arith.cmpf ogt
// CHECK:           %[[FLAG:.*]] = tensor.extract %[[GT]][] : tensor<i1>
// CHECK:           scf.condition(%[[FLAG]]) %[[H]] : tensor<4xf32>
// CHECK:         } do {
// CHECK:         ^bb0(%[[B:.*]]: tensor<4xf32>):
// CHECK:           %[[NEXT:.*]] = linalg.generic
// CHECK-SAME:        ins(%[[B]], %[[HALF]] : tensor<4xf32>, tensor<f32>)
// CHECK:             arith.mulf
// CHECK:           scf.yield %[[NEXT]] : tensor<4xf32>
// CHECK:         }
// CHECK:         return %[[OUT]]
// CHECK-NOT:     pyfront.
func.func @while_regions(%h0: tensor<4xf32>, %t: tensor<f32>, %half: tensor<f32>) -> tensor<4xf32> {
  %out = scf.while (%h = %h0) : (tensor<4xf32>) -> tensor<4xf32> {
    %s = "pyfront.sum"(%h) {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
    %gt = "pyfront.greater"(%s, %t) : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %flag = tensor.extract %gt[] : tensor<i1>
    scf.condition(%flag) %h : tensor<4xf32>
  } do {
  ^bb0(%b: tensor<4xf32>):
    %next = "pyfront.multiply"(%b, %half) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    scf.yield %next : tensor<4xf32>
  }
  return %out : tensor<4xf32>
}

// -----

/// A region without pyfront ops is left as it is (the pass rewrites only
/// pyfront ops, wherever they are).

// CHECK-LABEL: func.func @if_untouched
// CHECK:         scf.if
// CHECK-NOT:       linalg.generic
// CHECK:           scf.yield %{{.*}} : tensor<4xf32>
func.func @if_untouched(%c: i1, %x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %r = scf.if %c -> (tensor<4xf32>) {
    scf.yield %x : tensor<4xf32>
  } else {
    scf.yield %y : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
