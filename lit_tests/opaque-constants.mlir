// RUN: pyfront-opt %s --split-input-file --opaque-constants | filecheck %s

/// `x * 0.0` for Vulkan: the zero is read from a 0-d input behind an
/// optimization barrier (Mesa folds a constant one to 0.0, losing -0.0 and NaN).

// CHECK-LABEL: func.func @times_zero
// CHECK:         %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<f32>
// CHECK:         %[[OPAQUE:.*]] = util.optimization_barrier %[[Z]] : tensor<f32>
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %[[OPAQUE]] : tensor<4xf32>, tensor<f32>)
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %[[ZERO:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      arith.mulf %[[X]], %[[ZERO]] : f32
#row = affine_map<(d0) -> (d0)>
module attributes {pyfront.backend = "vulkan"} {
  func.func @times_zero(%x: tensor<4xf32>) -> tensor<4xf32> {
    %e = tensor.empty() : tensor<4xf32>
    %r = linalg.generic {indexing_maps = [#row, #row], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%a: f32, %o: f32):
      %c = arith.constant 0.0 : f32
      %m = arith.mulf %a, %c : f32
      linalg.yield %m : f32
    } -> tensor<4xf32>
    return %r : tensor<4xf32>
  }
}

// -----

/// `x - x` (one tensor read twice, one value to Mesa): the subtrahend is
/// multiplied by an opaque 1.0, so inf - inf stays NaN.

// CHECK-LABEL: func.func @minus_itself
// CHECK:         %[[ONE:.*]] = arith.constant dense<1.000000e+00> : tensor<f64>
// CHECK:         %[[OPAQUE:.*]] = util.optimization_barrier %[[ONE]] : tensor<f64>
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %[[OPAQUE]] : tensor<3xf64>, tensor<3xf64>, tensor<f64>)
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f64, %[[B:.*]]: f64, %[[U:.*]]: f64, %{{.*}}: f64):
// CHECK-NEXT:      %[[B1:.*]] = arith.mulf %[[B]], %[[U]] : f64
// CHECK-NEXT:      arith.subf %[[A]], %[[B1]] : f64
#row = affine_map<(d0) -> (d0)>
module attributes {pyfront.backend = "vulkan"} {
  func.func @minus_itself(%x: tensor<3xf64>) -> tensor<3xf64> {
    %e = tensor.empty() : tensor<3xf64>
    %r = linalg.generic {indexing_maps = [#row, #row, #row], iterator_types = ["parallel"]} ins(%x, %x : tensor<3xf64>, tensor<3xf64>) outs(%e : tensor<3xf64>) {
    ^bb0(%a: f64, %b: f64, %o: f64):
      %d = arith.subf %a, %b : f64
      linalg.yield %d : f64
    } -> tensor<3xf64>
    return %r : tensor<3xf64>
  }
}

// -----

/// A signed zero keeps its sign: `x - (-0.0)` reads -0.0 (Mesa folds it to x).

// CHECK-LABEL: func.func @minus_negative_zero
// CHECK:         arith.constant dense<-0.000000e+00> : tensor<f32>
// CHECK:         arith.subf
#row = affine_map<(d0) -> (d0)>
module attributes {pyfront.backend = "vulkan"} {
  func.func @minus_negative_zero(%x: tensor<4xf32>) -> tensor<4xf32> {
    %z = arith.constant dense<-0.0> : tensor<4xf32>
    %e = tensor.empty() : tensor<4xf32>
    %r = linalg.generic {indexing_maps = [#row, #row, #row], iterator_types = ["parallel"]} ins(%x, %z : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %d = arith.subf %a, %b : f32
      linalg.yield %d : f32
    } -> tensor<4xf32>
    return %r : tensor<4xf32>
  }
}

// -----

/// On the CPU (or any backend Mesa does not compile for) nothing changes.

// CHECK-LABEL: func.func @on_the_cpu
// CHECK-NOT:     util.optimization_barrier
// CHECK:         arith.mulf %{{.*}}, %{{.*}} : f32
#row = affine_map<(d0) -> (d0)>
module attributes {pyfront.backend = "cpu"} {
  func.func @on_the_cpu(%x: tensor<4xf32>) -> tensor<4xf32> {
    %e = tensor.empty() : tensor<4xf32>
    %r = linalg.generic {indexing_maps = [#row, #row], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%a: f32, %o: f32):
      %c = arith.constant 0.0 : f32
      %m = arith.mulf %a, %c : f32
      linalg.yield %m : f32
    } -> tensor<4xf32>
    return %r : tensor<4xf32>
  }
}

// -----

/// A reduction's running value starts from a filled zero but is not one:
/// the sum's `acc + x` is left as it is.

// CHECK-LABEL: func.func @sum
// CHECK-NOT:     util.optimization_barrier
// CHECK:         arith.addf %{{.*}}, %{{.*}} : f32
#row = affine_map<(d0) -> (d0)>
#scalar = affine_map<(d0) -> ()>
module attributes {pyfront.backend = "vulkan"} {
  func.func @sum(%x: tensor<4xf32>) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %r = linalg.generic {indexing_maps = [#row, #scalar], iterator_types = ["reduction"]} ins(%x : tensor<4xf32>) outs(%init : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %s = arith.addf %acc, %a : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %r : tensor<f32>
  }
}

// -----

/// An int64 tensor of several values (`x[[2, 0]]`'s indices) is read through
/// a barrier: IREE 3.13's SPIR-V conversion fails on it inlined. A splat one
/// compiles and is left alone.

// CHECK-LABEL: func.func @int64_indices
// CHECK:         %[[C:.*]] = arith.constant dense<[2, 0]> : tensor<2xi64>
// CHECK-NEXT:    %[[OPAQUE:.*]] = util.optimization_barrier %[[C]] : tensor<2xi64>
// CHECK-NOT:     util.optimization_barrier
// CHECK:         linalg.generic {{.*}} ins(%[[OPAQUE]], %{{.*}} : tensor<2xi64>, tensor<2xi64>)
#row = affine_map<(d0) -> (d0)>
module attributes {pyfront.backend = "vulkan"} {
  func.func @int64_indices(%x: tensor<3xf32>) -> tensor<2xi64> {
    %c = arith.constant dense<[2, 0]> : tensor<2xi64>
    %one = arith.constant dense<1> : tensor<2xi64>
    %e = tensor.empty() : tensor<2xi64>
    %r = linalg.generic {indexing_maps = [#row, #row, #row], iterator_types = ["parallel"]} ins(%c, %one : tensor<2xi64>, tensor<2xi64>) outs(%e : tensor<2xi64>) {
    ^bb0(%a: i64, %b: i64, %o: i64):
      %s = arith.addi %a, %b : i64
      linalg.yield %s : i64
    } -> tensor<2xi64>
    return %r : tensor<2xi64>
  }
}
