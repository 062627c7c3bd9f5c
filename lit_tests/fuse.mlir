// RUN: pyfront-opt %s --split-input-file --lower-to-linalg --fuse | filecheck %s

/// A chain of elementwise ops (bias add, tanh, exp) becomes one generic
/// computing all three in its body; the dead inits go with the producers.

// CHECK-LABEL: func.func @chain
// CHECK:         tensor.empty
// CHECK-NOT:     tensor.empty
// CHECK:         linalg.generic
// CHECK:           arith.addf
// CHECK:           math.tanh
// CHECK:           math.exp
// CHECK-NOT:     linalg.generic
func.func @chain(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %a = "pyfront.add"(%x, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %t = "pyfront.tanh"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %e = "pyfront.exp"(%t) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %e : tensor<4x8xf32>
}

// -----

/// A matmul is not elementwise and is never rewritten: it stays a
/// linalg.matmul; the bias add and the relu after it fuse into one consumer
/// generic (IREE puts that consumer in the matmul's dispatch).

// CHECK-LABEL: func.func @dense_relu
// CHECK:         linalg.matmul
// CHECK:         linalg.generic
// CHECK:           arith.addf
// CHECK:           arith.select
// CHECK-NOT:     linalg.generic
func.func @dense_relu(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %m = "pyfront.matmul"(%x, %w) : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %a = "pyfront.add"(%m, %b) : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %z = arith.constant dense<0.0> : tensor<4x3xf32>
  %r = "pyfront.maximum"(%a, %z) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// -----

/// An elementwise producer feeding a matmul is not fused into it: that would
/// recompute tanh once per output column inside the reduction.

// CHECK-LABEL: func.func @tanh_then_matmul
// CHECK:         linalg.generic
// CHECK:           math.tanh
// CHECK:         linalg.matmul
func.func @tanh_then_matmul(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>) -> tensor<4x3xf32> {
  %t = "pyfront.tanh"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = "pyfront.matmul"(%t, %w) : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  return %m : tensor<4x3xf32>
}

// -----

/// A producer with two uses (exp) is not duplicated into its consumers; the
/// single-use tanh between them still fuses into the add.

// CHECK-LABEL: func.func @two_uses
// CHECK:         linalg.generic
// CHECK:           math.exp
// CHECK:           linalg.yield
// CHECK:         linalg.generic
// CHECK-NOT:       math.exp
// CHECK:           math.tanh
// CHECK-NEXT:      arith.select
// CHECK-NEXT:      arith.addf
// CHECK-NOT:     linalg.generic
func.func @two_uses(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = "pyfront.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = "pyfront.tanh"(%e) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %a = "pyfront.add"(%t, %e) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %a : tensor<4x8xf32>
}

// -----

/// A producer the consumer broadcasts (reads each element several times) is
/// not fused: it would be recomputed once per row.

// CHECK-LABEL: func.func @broadcast_consumer
// CHECK:         linalg.generic
// CHECK:           math.exp
// CHECK:           linalg.yield
// CHECK:         linalg.generic
// CHECK:           arith.addf
// CHECK-NOT:       math.exp
func.func @broadcast_consumer(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %e = "pyfront.exp"(%b) : (tensor<8xf32>) -> tensor<8xf32>
  %a = "pyfront.add"(%x, %e) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %a : tensor<4x8xf32>
}

// -----

/// An elementwise producer of a full reduction is fused into it: each
/// element is still computed once, and no intermediate tensor is written.
/// (The float32 sum accumulates in float64; a 0-d generic rounds it.)

// CHECK-LABEL: func.func @exp_sum
// CHECK:         linalg.generic
// CHECK-SAME:      iterator_types = ["reduction", "reduction"]
// CHECK:           math.exp
// CHECK:           arith.addf
// CHECK:         linalg.generic
// CHECK-SAME:      iterator_types = []
// CHECK-NOT:       math.exp
// CHECK:           arith.truncf
// CHECK-NOT:     linalg.generic
func.func @exp_sum(%x: tensor<4x2xf32>) -> tensor<f32> {
  %e = "pyfront.exp"(%x) : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %s = "pyfront.sum"(%e) {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x2xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

// -----

/// A broadcast folds into the elementwise op after it (whose init still
/// sizes both loops), but not into a full reduction: with a 0-d init no
/// operand would give the size of the broadcast dim.

// CHECK-LABEL: func.func @broadcast_exp_sum
// CHECK:         linalg.generic
// CHECK-SAME:      iterator_types = ["parallel", "parallel"]
// CHECK:           math.exp
// CHECK:         linalg.generic
// CHECK-SAME:      iterator_types = ["reduction", "reduction"]
// CHECK-NOT:       math.exp
// CHECK:           arith.addf
func.func @broadcast_exp_sum(%b: tensor<8xf32>) -> tensor<f32> {
  %x = "pyfront.broadcast_to"(%b) {shape = array<i64: 4, 8>} : (tensor<8xf32>) -> tensor<4x8xf32>
  %e = "pyfront.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = "pyfront.sum"(%e) {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x8xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
